"""Finding 11: the admin's Validate is a POST that a real worker runs in its sandbox."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from grader.models import Exercise, ExerciseValidation
from tests.pipeline.stack import Worker, wait_until

pytestmark = [
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_validate_is_computed_by_a_worker(worker: Worker, instructor, seed_content: None) -> None:
    web = Client()
    web.force_login(instructor)
    exercise = Exercise.objects.get(slug="stable-softmax")
    url = reverse("admin:grader_exercise_validate", kwargs={"pk": exercise.pk})
    assert web.post(url).status_code == 302
    validation = wait_until(
        lambda: ExerciseValidation.objects.filter(
            status__in=(ExerciseValidation.Status.DONE, ExerciseValidation.Status.FAILED)
        ).first(),
        timeout=90,
    )
    assert validation.status == ExerciseValidation.Status.DONE, validation.error  # type: ignore
    assert "The reference solution passes every check." in web.get(url).content.decode()
