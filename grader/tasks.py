"""Celery tasks: thin, they take ids and call services."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, InterfaceError

from grader.engine.executors import Executor
from grader.publish import (
    GRADE_SUBMISSION,
    REGRADE_PREVIEW,
    RUN_TRIAL,
    SWEEP_SUBMISSIONS,
    VALIDATE_EXERCISE,
)
from grader.services.exercises import exercise_validation_run
from grader.services.grading import submission_grade
from grader.services.queue import submissions_sweep
from grader.services.regrades import regrade_preview_run
from grader.services.trials import trial_run_execute
from grader.worker import executor_close, executor_get, worker_identity

log = logging.getLogger(__name__)


@shared_task(
    name=GRADE_SUBMISSION,
    # The database failing at the claim (a locked SQLite file, a PostgreSQL restart): nothing
    # is graded or held yet, so run again. Failures after the claim are handled inside: the
    # verdict's write is retried there, and a grade that gives up releases its row.
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
        # sandbox (it was interrupted mid-run). The service has handed the submission back.
        log.error(
            "submission %s: soft time limit in %s; restarting its sandbox", submission_id, worker
        )
        executor_close()
        return None


# Routed to its own queue with an expiry (settings.CELERY_TASK_ROUTES, CELERY_BEAT_SCHEDULE):
# sweeps published while no worker ran are dropped on delivery instead of run back to back.
@shared_task(name=SWEEP_SUBMISSIONS, autoretry_for=(DatabaseError,), max_retries=3)
def sweep_submissions() -> dict[str, int]:
    report = submissions_sweep()
    return {"requeued": report.requeued, "abandoned": report.abandoned}


def _sandbox() -> Executor:
    """This worker's sandbox for a staff job or a Run. If it refused to start, the task fails
    here, fail closed: the row stays queued (a Run's page gives up after TRIAL_STALE_SECONDS
    and offers to run again)."""
    executor = executor_get()
    if executor is None:
        raise RuntimeError("no sandbox in this worker")
    return executor


@shared_task(name=REGRADE_PREVIEW)
def regrade_preview(preview_id: int) -> None:
    regrade_preview_run(preview_id=preview_id, executor=_sandbox())


@shared_task(name=VALIDATE_EXERCISE)
def validate_exercise(validation_id: int) -> None:
    exercise_validation_run(validation_id=validation_id, executor=_sandbox())


@shared_task(name=RUN_TRIAL)
def run_trial(trial_id: int) -> None:
    executor = _sandbox()
    try:
        trial_run_execute(trial_id=trial_id, executor=executor, reraise=(SoftTimeLimitExceeded,))
    except SoftTimeLimitExceeded:
        # As for a grade: the sandbox's own limits should have fired first, so drop it.
        log.error("run %s: soft time limit; restarting its sandbox", trial_id)
        executor_close()
