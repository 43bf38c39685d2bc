# Written by hand: applied regrades, the verdict a regraded submission had before,
# and the notices students see when a regrade changed their score.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

STATUS_CHOICES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("passed", "Passed"),
    ("failed", "Failed"),
    ("error", "Error"),
    ("internal-error", "Internal error"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0007_trial_run"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Regrade",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("total", models.PositiveIntegerField(default=0)),
                ("checks_changed_at", models.DateTimeField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "exercise",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="regrades",
                        to="grader.exercise",
                    ),
                ),
                (
                    "preview",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="applied_as",
                        to="grader.regradepreview",
                    ),
                ),
                (
                    "requested_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ("-created_at", "-id")},
        ),
        migrations.AddField(
            model_name="submission",
            name="regrade",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="submissions",
                to="grader.regrade",
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="regrade_old_status",
            field=models.CharField(blank=True, max_length=20),
        ),
        migrations.AddField(
            model_name="submission",
            name="regrade_old_score",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="RegradeNotice",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("old_status", models.CharField(choices=STATUS_CHOICES, max_length=20)),
                ("old_score", models.FloatField(blank=True, null=True)),
                ("new_status", models.CharField(choices=STATUS_CHOICES, max_length=20)),
                ("new_score", models.FloatField(blank=True, null=True)),
                ("reason", models.CharField(max_length=300)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("seen_at", models.DateTimeField(blank=True, null=True)),
                (
                    "submission",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="regrade_notices",
                        to="grader.submission",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="regrade_notices",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ("-created_at", "-id"),
                "indexes": [
                    models.Index(fields=["user", "seen_at"], name="grader_notice_user_seen")
                ],
            },
        ),
    ]
