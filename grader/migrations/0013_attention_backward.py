"""The attention backward exercise: its kind among Exercise.kind's choices, and its row."""

from django.db import migrations, models

SLUG = "attention-backward"


def seed(apps, schema_editor):
    # The content lives in a pure module so tests can check it (the reference passes its checks).
    from grader.engine.exercise_content import EXERCISES, QUESTION_SLUG

    Exercise = apps.get_model("grader", "Exercise")
    ExerciseCheck = apps.get_model("grader", "ExerciseCheck")
    data = next(e for e in EXERCISES if e["slug"] == SLUG)
    exercise, _ = Exercise.objects.update_or_create(
        slug=SLUG,
        defaults={
            "title": data["title"],
            "kind": data["kind"],
            "statement": data["statement"],
            "starter_code": data["starter_code"],
            "entry_point": data["entry_point"],
            "reference_solution": data["reference_solution"],
            "question_slug": QUESTION_SLUG,
            "order": data["order"],
            "is_published": True,
        },
    )
    ExerciseCheck.objects.filter(exercise=exercise).delete()
    for order, check in enumerate(data["checks"]):
        ExerciseCheck.objects.create(
            exercise=exercise,
            name=check["name"],
            label=check["label"],
            params=check["params"],
            weight=check["weight"],
            order=order,
        )


def unseed(apps, schema_editor):
    Exercise = apps.get_model("grader", "Exercise")
    Exercise.objects.filter(slug=SLUG, submissions__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("grader", "0012_scaling_demonstration")]

    operations = [
        migrations.AlterField(
            model_name="exercise",
            name="kind",
            field=models.CharField(
                choices=[
                    ("attention", "Scaled dot-product attention"),
                    ("multi-head-attention", "Multi-head attention"),
                    ("softmax", "Softmax"),
                    ("softmax_backward", "Softmax backward"),
                    ("attention_backward", "Attention backward"),
                    ("demonstration", "The ten-minute demonstration"),
                ],
                max_length=40,
            ),
        ),
        migrations.RunPython(seed, unseed),
    ]
