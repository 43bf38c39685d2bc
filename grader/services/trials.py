"""Run before Submit: ask a worker to run a student's code on the visible examples and their
own small input (``TrialRun``), and compute it there. Never a Submission: no hidden input, no
check, no score, nothing counted.

browser/API -> trial_run_create (checks the input, the limit; row, then publish on commit) ->
worker task -> trial_run_execute (WorkerJob.claim; the sandbox computes the outputs; the
reference and the comparison run in the worker, outside the sandbox) -> the page polls the row.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction

from common.ratelimit import rate_limit_hit
from grader.engine.limits import CODE_MAX_BYTES
from grader.engine.trials import (
    MSG_INTERNAL,
    STATUS_INTERNAL,
    TrialInputError,
    trial_cases,
    trial_execute,
    trial_input_case,
)
from grader.models import Exercise, TrialRun
from grader.publish import RUN_TRIAL, task_publish
from grader.selectors.exercises import exercise_limits
from grader.services.submitting import SubmissionRejected

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from grader.engine.executors.base import Executor

log = logging.getLogger(__name__)

# Runs of one user waiting for a worker at once: a Run is a quick look, not a queue of its own.
MAX_WAITING_PER_USER = 3

MSG_RUN_CODE_EMPTY = "Your code is empty. Write the function, then run it."
MSG_RUN_CODE_TOO_LARGE = f"Your code is larger than {CODE_MAX_BYTES // 1024} KiB."
MSG_RUN_THROTTLED = "Too many runs in a short time. Wait {wait} seconds and run again."
MSG_RUN_TOO_MANY_WAITING = (
    "You already have {n} runs waiting for a worker. Wait for them to finish, then run again."
)
MSG_RUN_EXERCISE_UNAVAILABLE = "This exercise is not open."


class TrialRejected(SubmissionRejected):
    """A Run that can't be accepted, with a message for the user and an HTTP status."""


def trial_run_create(
    *, user: AbstractBaseUser, exercise: Exercise, code: str, input_spec: Any | None
) -> TrialRun:
    """Store a Run and publish its id once committed. The page and the API both come here, so
    the checks and the "runs" limit are the same whatever the path."""
    if not exercise.is_published:
        raise TrialRejected(MSG_RUN_EXERCISE_UNAVAILABLE, status_code=404)
    if not code.strip():
        raise TrialRejected(MSG_RUN_CODE_EMPTY)
    if len(code.encode()) > CODE_MAX_BYTES:
        raise TrialRejected(MSG_RUN_CODE_TOO_LARGE, status_code=413)
    if input_spec is not None:
        try:
            # Trusted numpy on a bounded input: a mistake is told at once, not by a worker.
            trial_input_case(exercise.kind, input_spec)
        except TrialInputError as exc:
            raise TrialRejected(exc.message) from None
    wait = rate_limit_hit(scope="runs", ident=str(user.pk), rate=settings.THROTTLE_RATES["runs"])
    if wait is not None:
        raise TrialRejected(
            MSG_RUN_THROTTLED.format(wait=int(wait)), status_code=429, retry_after=int(wait)
        )
    waiting = TrialRun.objects.filter(
        user=user, status__in=(TrialRun.Status.QUEUED, TrialRun.Status.RUNNING)
    )
    if waiting.count() >= MAX_WAITING_PER_USER:
        raise TrialRejected(
            MSG_RUN_TOO_MANY_WAITING.format(n=MAX_WAITING_PER_USER), status_code=429
        )
    with transaction.atomic():
        trial = TrialRun.objects.create(
            user=user, requested_by=user, exercise=exercise, code=code, input_spec=input_spec
        )
        trial_id = trial.pk
        # A worker must never receive an id it can't read; a lost publish leaves the row
        # queued, and the page stops waiting for it after TRIAL_STALE_SECONDS.
        transaction.on_commit(lambda: task_publish(name=RUN_TRIAL, args=(trial_id,)))
    return trial


def trial_run_execute(
    *,
    trial_id: int,
    executor: Executor,
    reraise: tuple[type[BaseException], ...] = (),
) -> TrialRun | None:
    """Compute a requested Run (in a worker). Returns None if another worker has it."""
    trial = TrialRun.claim(trial_id)
    if trial is None:
        return None
    assert isinstance(trial, TrialRun)
    exercise = trial.exercise
    try:
        report = trial_execute(
            kind=exercise.kind,
            entry_point=exercise.entry_point,
            code=trial.code,
            cases=trial_cases(exercise.kind, trial.input_spec),
            limits=exercise_limits(exercise=exercise),
            executor=executor,
        )
    except Exception as exc:
        log.exception("run %s failed", trial_id)
        trial.error = MSG_INTERNAL
        trial.finish(failed=True, fields=("error",))
        if isinstance(exc, reraise):
            raise
        return trial
    trial.result = report
    if report["status"] == STATUS_INTERNAL:
        trial.error = MSG_INTERNAL
        trial.finish(failed=True, fields=("result", "error"))
    else:
        trial.finish(failed=False, fields=("result",))
    return trial
