"""Staff requests that a worker computes (grader.models.WorkerJob): asked here, run there."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from django.db import transaction

from grader.models import Exercise, WorkerJob
from grader.publish import task_publish

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

J = TypeVar("J", bound=WorkerJob)


def job_request(*, model: type[J], task: str, exercise: Exercise, user: AbstractBaseUser) -> J:
    """Store the request and publish its id once the row is committed (a worker must never
    receive an id it can't read); if the publish fails, the row says it is still queued."""
    with transaction.atomic():
        job = model.objects.create(exercise=exercise, requested_by=user)
        job_id = job.pk
        transaction.on_commit(lambda: task_publish(name=task, args=(job_id,)))
    return job
