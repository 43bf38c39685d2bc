"""Grading a claimed submission: the worker's side of the pipeline.

a grade task -> submission_grade: claim the row (grader.services.queue) -> the sandbox
computes the outputs while the heartbeat keeps the lease (grader.heartbeat) -> trusted
checks judge them (grader.engine.grading) -> the engine's Verdict is stored as it is
(submission_finish; the write, not the grade, is retried) -> the page polls the row.
Decides nothing about the queue itself: every move of the row is a transition of the queue.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, connection

from grader.engine.status import VerdictStatus
from grader.heartbeat import submission_lease_kept
from grader.models import Submission
from grader.services.queue import (
    submission_claim,
    submission_finish,
    submission_release,
    verdict_internal_error,
)
from grader.services.submitting import submission_enqueue

if TYPE_CHECKING:
    from grader.engine.executors import Executor
    from grader.engine.grading import ExerciseSpec, Plan, Verdict

log = logging.getLogger(__name__)


def _submission_release_quietly(*, submission: Submission) -> None:
    # Hand the row back at once; if even that fails (the database is away), the lease, no
    # longer renewed, runs out within GRADER_LEASE_SECONDS and the sweeper requeues the row.
    try:
        submission_release(submission=submission)
    except (DatabaseError, InterfaceError):
        log.warning(
            "submission %s: could not release the claim; it frees itself when the lease ends",
            submission.pk,
        )


# The write of a computed verdict is retried, never the grade: a grade costs a sandbox run
# (and an attempt). Seconds between tries: 7.5 s in all, while the heartbeat keeps the lease.
VERDICT_WRITE_DELAYS = (0.5, 1.0, 2.0, 4.0)


def _submission_verdict_store(
    *, submission: Submission, verdict: Verdict, plots: dict[str, Any] | None
) -> bool:
    for delay in (*VERDICT_WRITE_DELAYS, None):
        try:
            return submission_finish(submission=submission, verdict=verdict, plots=plots)
        except (DatabaseError, InterfaceError):
            if delay is None:
                raise
            log.warning(
                "submission %s: storing the verdict failed; trying again in %ss",
                submission.pk,
                delay,
                exc_info=True,
            )
            if not connection.in_atomic_block:
                connection.close()  # a connection the server dropped is replaced on next use
            time.sleep(delay)
    raise AssertionError("unreachable")  # the last delay is None: it returns or raises


class _Plans:
    """The next grade's hidden inputs, prepared by this worker process once a verdict is stored.

    The seed is drawn here and offered at the next claim, which stores it in a row without one
    (a new submission): the inputs and their reference outputs are then ready, and the grade
    skips planning (a tenth of a grade or more; while idle it costs nothing). Prepared for the
    exercise graded last: for another exercise, or its checks since edited, grade() plans as
    usual (it uses a plan only for the very spec and seed it was made for).
    """

    def __init__(self) -> None:
        self._pid = -1

    def _ensure(self) -> None:
        # Forked pool processes inherit this object: each draws its own seeds.
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._offer = secrets.randbits(31)
            self._plan: Plan | None = None
            self._spec: ExerciseSpec | None = None

    def offered(self) -> int:
        self._ensure()
        return self._offer

    def take(self, *, spec: ExerciseSpec, seed: int) -> Plan | None:
        self._ensure()
        self._spec = spec
        if seed != self._offer:
            return None  # the row had its seed already (a regrade, a retry)
        plan, self._plan = self._plan, None
        self._offer = secrets.randbits(31)  # used: the next claim offers another
        return plan

    def prepare(self) -> None:
        self._ensure()
        plan, spec = self._plan, self._spec
        if spec is None or (plan is not None and plan.spec is spec and plan.seed == self._offer):
            return
        from grader.engine.grading import grade_plan

        try:
            self._plan = grade_plan(spec=spec, seed=self._offer)
        except Exception:  # a check that cannot be prepared: the grade reports it itself
            self._plan = None


_plans = _Plans()


def submission_grade(*, submission_id: int, worker: str, executor: Executor | None) -> str | None:
    """Claim, grade through the sandbox, store. Returns the final status, or None if not ours."""
    submission = submission_claim(submission_id=submission_id, worker=worker, seed=_plans.offered())
    if submission is None:
        # Still queued, so not claimed only because another of its user's runs: back of the
        # queue, shortly (without this the sweeper would publish it GRADER_REQUEUE_AFTER later).
        if Submission.objects.queued().filter(pk=submission_id).exists():
            submission_enqueue(
                submission_id=submission_id, countdown=settings.GRADER_FAIR_SHARE_RETRY_SECONDS
            )
        return None
    try:
        with submission_lease_kept(submission=submission):
            graded = _submission_verdict(submission=submission, executor=executor)
            if graded is None:  # our side failed (no sandbox here, or it broke): elsewhere
                submission_release(submission=submission)
                return None
            verdict, plots = graded
            try:
                _submission_verdict_store(submission=submission, verdict=verdict, plots=plots)
            except (DatabaseError, InterfaceError):
                log.error("submission %s: could not store its verdict; releasing", submission.pk)
                _submission_release_quietly(submission=submission)
                return None
        _plans.prepare()  # the verdict is out: the next one's inputs, before the next claim
        return verdict.status
    except BaseException:
        # Anything else that stops this grade (the soft time limit, the database failing
        # before the grade) hands the row back now, instead of holding it for a whole lease.
        _submission_release_quietly(submission=submission)
        raise


def _submission_verdict(
    *, submission: Submission, executor: Executor | None
) -> tuple[Verdict, dict[str, Any] | None] | None:
    """The verdict of one claimed submission (one sandbox run) and the pictures of the
    function, or None if we failed it."""
    from grader.engine.grading import grade
    from grader.engine.plots import plot_calls, plots_from_results
    from grader.selectors.exercises import exercise_spec_for_grading

    if submission.attempts > settings.GRADER_MAX_ATTEMPTS:
        # Delivered again and again (it kills its worker, or the sandbox keeps failing).
        return verdict_internal_error(), None
    if executor is None:  # the sandbox refused to start here: fail closed, try elsewhere
        return None
    exercise = submission.exercise
    spec = exercise_spec_for_grading(exercise=exercise)
    # The one line a fault test counts: sandbox runs per submission, not only verdicts.
    log.info(
        "submission %s: grading, attempt %s, in %s",
        submission.pk,
        submission.attempts,
        submission.worker,
    )
    # The pictures' hidden-free inputs ride along in the grade's one sandbox run.
    verdict = grade(
        spec=spec,
        code=submission.code,
        seed=submission.seed,
        executor=executor,
        plan=_plans.take(spec=spec, seed=submission.seed),
        pictures=plot_calls(exercise.kind),
    )
    if verdict.status == VerdictStatus.INTERNAL_ERROR:
        return None
    plots = None
    if verdict.status != VerdictStatus.ERROR and verdict.pictures:
        plots = plots_from_results(
            exercise.kind, list(verdict.pictures), diagnosis=verdict.diagnosis
        )
    return verdict, plots
