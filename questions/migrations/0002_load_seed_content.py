"""Load the seed content (pages 000, 002, 003, 004) so `make run` and the tests see it.

The content lives in questions/content/*.md; `manage.py load_content` loads the same files
later (and `--update` overwrites the seeded rows from them).
"""

from django.db import migrations

from questions.content_loading import content_load


def load(apps, schema_editor):
    # Historical models: content_load only sets the fields they have.
    content_load(apps)


class Migration(migrations.Migration):
    dependencies = [("questions", "0001_initial")]

    # Reversing leaves the rows: content may have been edited by instructors since.
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
