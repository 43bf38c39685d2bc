"""Follow-ups learn the wrong answers their authors foresee; patterns become optional.

The seeded follow-ups (migration 0002 ran before the field existed) get their `known_wrong`
from the content files, where it is still empty.
"""

from django.db import migrations, models

import questions.models
from questions.content_files import content_bundle


def fill_known_wrong(apps, schema_editor):
    FollowUp = apps.get_model("questions", "FollowUp")
    for question in content_bundle().questions:
        for index, data in enumerate(question["follow_ups"]):
            if data["known_wrong"]:
                FollowUp.objects.filter(
                    question__slug=question["slug"], ordering=index, known_wrong={}
                ).update(known_wrong=data["known_wrong"])


class Migration(migrations.Migration):
    dependencies = [
        ("questions", "0003_exampleanswer"),
    ]

    operations = [
        migrations.AddField(
            model_name="followup",
            name="known_wrong",
            field=models.JSONField(
                blank=True,
                db_default={},
                default=dict,
                help_text='Wrong answers you foresee, each with what it is and why it is wrong: {"512": "d_model, the model width; the question asks for one head\'s width."} for a number or a shape, the option\'s text for a choice. Shown when a candidate gives it.',
            ),
        ),
        migrations.AlterField(
            model_name="keypoint",
            name="patterns",
            field=models.TextField(
                blank=True,
                help_text="Optional. One line each: a regular expression, `~ words` (a concept), `! regex` (wrong answers: a refuting cue) or `@name` (a shared set). See “How patterns are read” above.",
                validators=[questions.models._validate_patterns],
            ),
        ),
        migrations.AlterField(
            model_name="wronganswer",
            name="patterns",
            field=models.TextField(
                blank=True,
                help_text="Optional. One line each: a regular expression, `~ words` (a concept), `! regex` (wrong answers: a refuting cue) or `@name` (a shared set). See “How patterns are read” above.",
                validators=[questions.models._validate_patterns],
            ),
        ),
        # Reversing leaves the values: the column goes with the field.
        migrations.RunPython(fill_known_wrong, migrations.RunPython.noop),
    ]
