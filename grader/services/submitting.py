"""Submitting: a student's code becomes a queued row, its grade task published with the
user's fair-share priority.

browser/API -> submission_create (the checks, the caps, the row, then the publish once the row
is committed, id only) -> the queue (grader.services.queue) -> a worker grades it
(grader.services.grading). Never claims or grades anything itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from common.ratelimit import rate_limit_hit
from grader.engine.limits import CODE_MAX_BYTES
from grader.models import Exercise, Submission
from grader.publish import GRADE_SUBMISSION, task_publish
from grader.selectors.submissions import queued_ahead_of

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from django.db.models import QuerySet

log = logging.getLogger(__name__)

MSG_CODE_EMPTY = "Your code is empty. Paste or write a function, then submit."
MSG_CODE_UNCHANGED = (
    "This is the starter code, unchanged: it was not submitted and does not count. "
    "Write your function in the editor, then submit."
)
MSG_CODE_TOO_LARGE = (
    f"Your code is larger than {CODE_MAX_BYTES // 1024} KiB. "
    "Submit only the function and what it needs."
)
MSG_TOO_MANY_QUEUED = (
    "You already have {n} submissions waiting to be graded. "
    "Wait for them to finish, then submit again."
)
MSG_QUEUE_FULL = (
    "The grader is very busy right now. Please try again in a minute; nothing was lost."
)
MSG_SUBMIT_THROTTLED = "Too many submissions in a short time. Wait {wait} seconds and submit again."
MSG_EXERCISE_UNAVAILABLE = "This exercise is not open for submissions."


class SubmissionRejected(Exception):
    """A submission that can't be accepted, with a message for the user and an HTTP status."""

    def __init__(
        self, message: str, *, status_code: int = 400, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after


def is_starter_code(*, code: str, starter_code: str) -> bool:
    """Is ``code`` the exercise's starter code, whatever its whitespace and line endings?

    Grading it only fails (it is a stub) and counts an attempt against the student: a keyboard
    user who never reached the editor's text submits exactly this. Whitespace alone does not
    make it the student's own code (an editor or a paste may change indentation, trailing
    spaces, CRLF line endings).
    """
    return bool(starter_code.strip()) and code.split() == starter_code.split()


def submission_create(
    *, user: AbstractBaseUser, exercise: Exercise, code: str, now: datetime | None = None
) -> Submission:
    if not exercise.is_published:
        raise SubmissionRejected(MSG_EXERCISE_UNAVAILABLE, status_code=404)
    if not code.strip():
        raise SubmissionRejected(MSG_CODE_EMPTY)
    if len(code.encode()) > CODE_MAX_BYTES:
        raise SubmissionRejected(MSG_CODE_TOO_LARGE, status_code=413)
    # Before the rate limit and the row: a refused starter code is neither stored nor counted.
    if is_starter_code(code=code, starter_code=exercise.starter_code):
        raise SubmissionRejected(MSG_CODE_UNCHANGED)
    # One limit per user whatever the path: the page's form and the API both come here.
    wait = rate_limit_hit(
        scope="submissions", ident=str(user.pk), rate=settings.THROTTLE_RATES["submissions"]
    )
    if wait is not None:
        raise SubmissionRejected(
            MSG_SUBMIT_THROTTLED.format(wait=int(wait)), status_code=429, retry_after=int(wait)
        )
    now = now or timezone.now()
    with transaction.atomic():
        # Race: two submits of one user at once would both count 4 waiting rows and both pass
        # a cap of 5. Locking the user's row makes them count one after the other (on SQLite,
        # IMMEDIATE transactions already serialise writers: no statement there).
        if connection.features.has_select_for_update:
            users = get_user_model().objects.select_for_update()
            list(users.filter(pk=user.pk).values_list("pk"))
        # One read of the user's recent rows gives both their waiting count (the cap) and
        # the new submission's fair-share priority (all their waiting rows are ahead of it).
        mine = _recent(Submission.objects.filter(user_id=user.pk), now=now)
        cap = settings.GRADER_MAX_QUEUED_PER_USER
        if sum(status in Submission.WAITING_STATUSES for _, status, _, _ in mine) >= cap:
            raise SubmissionRejected(MSG_TOO_MANY_QUEUED.format(n=cap), status_code=429)
        priority = _priority_of(mine, now=now) if settings.GRADER_FAIR_SHARE_PRIORITIES else None
        waiting, ahead = _waiting_and_ahead(priority=priority or 0, now=now)
        if waiting >= settings.GRADER_MAX_QUEUED_TOTAL:
            raise SubmissionRejected(MSG_QUEUE_FULL, status_code=429)
        submission = Submission.objects.create(
            user=user,
            exercise=exercise,
            code=code,
            status=Submission.Status.QUEUED,
            # The seed of the hidden inputs is drawn by the worker that first claims the row
            # (see grader.services.queue.submission_claim), then stored: any rerun replays
            # the same verdict.
            seed=Submission.SEED_UNDRAWN,
            received_at=now,
            queued_at=now,
            # Stored with the row (the queue position counts in the broker's order).
            priority=priority or 0,
        )
        submission.queue_position_at_insert = ahead + 1
        # Publish only once the row is committed: a worker must never receive an id it can't
        # read. If the publish fails (Redis down), the sweeper finds the row still queued.
        submission_id = submission.pk
        transaction.on_commit(
            lambda: submission_enqueue(submission_id=submission_id, priority=priority)
        )
    return submission


def _waiting_and_ahead(*, priority: int, now: datetime) -> tuple[int, int]:
    """The waiting rows (the queue cap's count) and the queued ones a new row of ``priority``
    goes behind (selectors.submissions.queued_ahead_of). The rows ahead are waiting rows, so
    an empty queue (a submit at idle, the common case) needs no second count."""
    waiting = Submission.objects.waiting().count()
    if not waiting:
        return 0, 0
    ahead = Submission.objects.filter(queued_ahead_of(priority=priority, queued_at=now)).count()
    return waiting, ahead


# --- Fair share: the grade task's priority --------------------------------------------------
# kombu's Redis transport serves priority 0 first and 9 last (grader/publish.py).
FAIR_SHARE_PRIORITY_MAX = 9


def fair_share_priority(*, sandbox_seconds: float, waiting_ahead: int) -> int:
    """0 (served first) to 9 from a user's recent sandbox seconds and their own earlier waiting
    submissions.

    Seconds count on a log scale, one step per doubling of GRADER_FAIR_SHARE_STEP_SECONDS
    (under one step: 0), so the 5 s of one CPU-burning submission already put a user behind a
    student whose grades take milliseconds. Seconds alone know nothing of a burst queued this
    instant (none has run yet), so each of the user's earlier waiting submissions adds one
    step too: a user's n-th waiting submission goes behind everyone's first, which is close to
    round-robin between users.
    """
    step = settings.GRADER_FAIR_SHARE_STEP_SECONDS
    level = 0 if sandbox_seconds < step else 1 + math.floor(math.log2(sandbox_seconds / step))
    return min(FAIR_SHARE_PRIORITY_MAX, level + waiting_ahead)


def submission_priority(*, submission_id: int, now: datetime | None = None) -> int:
    """The grade task's priority for this submission: its user's recent share of the sandbox.

    One query on the (user, finished_at) index: the user's rows finished within
    GRADER_FAIR_SHARE_WINDOW_SECONDS and those not finished (queued or running, a handful:
    the queue cap), summed here rather than in SQL so SQLite and PostgreSQL agree.
    """
    now = now or timezone.now()
    # A join through the user, not a subquery: SQLite then searches the index by user_id
    # and the finished_at range (with a scalar subquery it skip-scanned every user).
    rows = _recent(Submission.objects.filter(user__submissions__pk=submission_id), now=now)
    return _priority_of(rows, now=now, before=submission_id)


Row = tuple[int, str, datetime | None, datetime | None]  # pk, status, started_at, finished_at


def _recent(rows: QuerySet[Submission], *, now: datetime) -> list[Row]:
    """Of ``rows``, those finished within GRADER_FAIR_SHARE_WINDOW_SECONDS and those not
    finished (queued or running: a handful, the queue cap), on the (user, finished_at) index."""
    since = now - timedelta(seconds=settings.GRADER_FAIR_SHARE_WINDOW_SECONDS)
    return list(
        rows.filter(Q(finished_at__gte=since) | Q(finished_at__isnull=True))
        .order_by()
        .values_list("pk", "status", "started_at", "finished_at")
    )


def _priority_of(rows: Iterable[Row], *, now: datetime, before: int | None = None) -> int:
    """The priority from a user's recent rows (summed here rather than in SQL so SQLite and
    PostgreSQL agree); the waiting rows ahead are those with a pk below ``before`` (all of
    them for a submission not yet created)."""
    seconds = 0.0
    waiting_ahead = 0
    for pk, status, started_at, finished_at in rows:
        if status == Submission.Status.RUNNING and started_at is not None:
            seconds += max(0.0, (now - started_at).total_seconds())  # the run so far counts
        elif finished_at is not None and started_at is not None:
            seconds += max(0.0, (finished_at - started_at).total_seconds())
        if (before is None or pk < before) and status in Submission.WAITING_STATUSES:
            waiting_ahead += 1
    return fair_share_priority(sandbox_seconds=seconds, waiting_ahead=waiting_ahead)


def submission_enqueue(
    *, submission_id: int, countdown: float | None = None, priority: int | None = None
) -> bool:
    """Publish the grade task. ``priority``: already computed and stored (a new submission);
    otherwise it is computed now, from the user's share, and stored if it changed."""
    if priority is None and settings.GRADER_FAIR_SHARE_PRIORITIES:
        try:
            priority = submission_priority(submission_id=submission_id)
            # Kept for the queue position; written only when it changes (most are 0).
            Submission.objects.queued().filter(pk=submission_id).exclude(priority=priority).update(
                priority=priority
            )
        except DatabaseError:  # never lose a publish over its priority: kombu's default (0)
            log.warning("submission %s: no fair-share priority", submission_id, exc_info=True)
    return task_publish(
        name=GRADE_SUBMISSION, args=(submission_id,), countdown=countdown, priority=priority
    )
