"""Celery tasks: thin, they take ids and call services."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, InterfaceError

from grader.publish import GRADE_SUBMISSION, REGRADE_PREVIEW
from grader.services.submissions import (
    regrade_preview_run,
    submission_grade,
    submission_release_if_held,
    submissions_sweep,
)
from grader.worker import executor_close, executor_get, worker_identity

log = logging.getLogger(__name__)


@shared_task(
    name=GRADE_SUBMISSION,
    # A locked SQLite file or a PostgreSQL restart: retry; the claim makes reruns harmless.
    autoretry_for=(DatabaseError, InterfaceError),
    retry_backoff=1,
    retry_backoff_max=30,
    max_retries=8,
)
def grade_submission(submission_id: int) -> str | None:
    worker = worker_identity()
    try:
        return submission_grade(submission_id=submission_id, worker=worker, executor=executor_get())
    except SoftTimeLimitExceeded:
        # The sandbox's own limits should have fired first, so the worker is wedged: drop this
        # sandbox (it was interrupted mid-run) and hand the submission back, never charged.
        log.error(
            "submission %s: soft time limit in %s; restarting its sandbox", submission_id, worker
        )
        executor_close()
        submission_release_if_held(submission_id=submission_id, worker=worker)
        return None


@shared_task(name="grader.sweep_submissions", autoretry_for=(DatabaseError,), max_retries=3)
def sweep_submissions() -> dict[str, int]:
    report = submissions_sweep()
    return {"requeued": report.requeued, "abandoned": report.abandoned}


@shared_task(name=REGRADE_PREVIEW)
def regrade_preview(preview_id: int) -> None:
    executor = executor_get()
    if executor is None:  # this worker's sandbox refused to start: leave it to another
        raise RuntimeError("no sandbox in this worker")
    regrade_preview_run(preview_id=preview_id, executor=executor)
