# Fair share: the index of a user's recent sandbox seconds, read at every
# publish of a grade task (grader.services.submissions.submission_priority), and the priority
# published, which the queue position counts by.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0008_regrade_notice"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="priority",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(fields=["user", "finished_at"], name="grader_sub_user_finished"),
        ),
    ]
