# Placeholder written by the lead: the Run helper fills in the operations (TrialRun).

from django.conf import settings
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0006_submission_status_queued_at_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations: list[migrations.operations.base.Operation] = []
