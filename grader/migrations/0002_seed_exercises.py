"""Seed the three built-in exercises (slugs and signatures are a contract)."""

from django.db import migrations


def seed(apps, schema_editor):
    # The content lives in a pure module so tests can check it (each reference passes its checks).
    from grader.engine.exercise_content import EXERCISES, QUESTION_SLUG

    Exercise = apps.get_model("grader", "Exercise")
    ExerciseCheck = apps.get_model("grader", "ExerciseCheck")
    for data in EXERCISES:
        exercise, _ = Exercise.objects.update_or_create(
            slug=data["slug"],
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
    from grader.engine.exercise_content import EXERCISE_SLUGS

    Exercise = apps.get_model("grader", "Exercise")
    Exercise.objects.filter(slug__in=EXERCISE_SLUGS, submissions__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("grader", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
