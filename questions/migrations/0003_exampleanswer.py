"""Example answers for instructors, seeded from the evaluation set's dev lines (if present)."""

import django.db.models.deletion
from django.db import migrations, models

from questions.example_answers import example_answers_load


def load(apps, schema_editor):
    example_answers_load(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("questions", "0002_load_seed_content"),
    ]

    operations = [
        migrations.CreateModel(
            name="ExampleAnswer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("text", models.TextField()),
                (
                    "expected_key_points",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Slugs of the key points this answer makes.",
                    ),
                ),
                (
                    "expected_wrong_answer",
                    models.SlugField(
                        blank=True, help_text="Slug of the wrong answer it states; blank for none."
                    ),
                ),
                ("note", models.CharField(blank=True, max_length=300)),
                ("ordering", models.PositiveIntegerField(default=0)),
                (
                    "follow_up",
                    models.ForeignKey(
                        blank=True,
                        help_text="Leave empty for an answer to the question itself.",
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="example_answers",
                        to="questions.followup",
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="example_answers",
                        to="questions.question",
                    ),
                ),
            ],
            options={
                "ordering": ("ordering", "id"),
            },
        ),
        # Reversing leaves nothing to undo: the table goes with the model.
        migrations.RunPython(load, migrations.RunPython.noop),
    ]
