"""Fair share of grading: a light user's submission passes a heavy user's
queued ones, through Celery priorities by recent sandbox seconds.

The pipeline tests run a real Redis and a real Celery worker (one process, as a saturated
worker pool looks to the queue) and assert on the ORDER of verdicts, never on wall-clock time.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from grader.models import Exercise, Submission
from grader.services.submitting import fair_share_priority, submission_priority
from tests.factories import student_create, submission_create
from tests.pipeline.stack import Worker, golden, submit, wait_until

CORRECT = golden("correct_matmul")
# Correct, after a second's sleep: a burner's submission holds a worker slot about 1 s, spent
# inside the sandbox (the sleep runs there, at module load).
SLOW = "import time\ntime.sleep(1.0)\n" + CORRECT
BURNERS = 3
BURST = 4  # each burner's queued submissions, under the queue cap of 5
FINAL = {s.value for s in Submission.FINAL_STATUSES}


def _client(username: str) -> APIClient:
    user = student_create(username=username, password=f"pw-{username}-123")
    client = APIClient()
    client.force_authenticate(user)
    return client


def _all_final(ids: list[int], timeout: float) -> None:
    wait_until(
        lambda: Submission.objects.filter(pk__in=ids, status__in=FINAL).count() == len(ids),
        timeout=timeout,
        step=0.2,
    )


def _finished_before(ids: list[int], honest: int) -> int:
    done = Submission.objects.get(pk=honest).finished_at
    return Submission.objects.filter(pk__in=ids, finished_at__lt=done).count()


# --- The priority, without a broker ---------------------------------------------------------


def test_the_priority_grows_with_recent_seconds_and_the_users_own_backlog(settings) -> None:
    settings.GRADER_FAIR_SHARE_STEP_SECONDS = 1.0
    assert fair_share_priority(sandbox_seconds=0.0, waiting_ahead=0) == 0
    assert fair_share_priority(sandbox_seconds=0.3, waiting_ahead=0) == 0  # a few honest grades
    assert fair_share_priority(sandbox_seconds=5.0, waiting_ahead=0) == 3  # one CPU burner
    assert fair_share_priority(sandbox_seconds=60.0, waiting_ahead=0) == 6
    assert fair_share_priority(sandbox_seconds=0.0, waiting_ahead=2) == 2
    assert fair_share_priority(sandbox_seconds=1e6, waiting_ahead=5) == 9  # kombu's last step


@pytest.mark.django_db
def test_the_priority_counts_the_window_and_the_running_grade_in_one_query(settings) -> None:
    settings.GRADER_FAIR_SHARE_WINDOW_SECONDS = 600
    now = timezone.now()
    user = student_create(username="heavy")
    other = student_create(username="light")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")

    def row(owner, status, *, started=None, finished=None) -> Submission:  # type: ignore[no-untyped-def]
        return submission_create(
            user=owner,
            exercise=exercise,
            code="x",
            seed=1,
            status=status,
            started_at=started and now - timedelta(seconds=started),
            finished_at=(finished is not None and now - timedelta(seconds=finished)) or None,
        )

    row(user, Submission.Status.FAILED, started=3000, finished=2990)  # out of the window: 0 s
    row(user, Submission.Status.ERROR, started=100, finished=95)  # 5 s
    row(user, Submission.Status.RUNNING, started=3)  # 3 s so far
    mine = row(user, Submission.Status.QUEUED)
    theirs = row(other, Submission.Status.QUEUED)
    with CaptureQueriesContext(connection) as queries:
        assert submission_priority(submission_id=mine.pk, now=now) == (
            fair_share_priority(sandbox_seconds=8.0, waiting_ahead=1)
        )
    assert len(queries) == 1
    assert submission_priority(submission_id=theirs.pk, now=now) == 0


@pytest.mark.django_db
def test_a_new_submission_is_stored_and_published_with_its_priority_at_once(
    settings, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # Computed from the rows read for the queue cap, in the creating transaction: the same
    # priority the enqueue would compute afterwards, with no UPDATE of the new row.
    from grader.services import submitting as services

    settings.GRADER_FAIR_SHARE_WINDOW_SECONDS = 600
    settings.GRADER_FAIR_SHARE_STEP_SECONDS = 1.0
    published: list[int | None] = []
    monkeypatch.setattr(
        services, "task_publish", lambda **kw: published.append(kw["priority"]) or True
    )
    user = student_create(username="heavy")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    now = timezone.now()
    submission_create(
        user=user,
        exercise=exercise,
        code="x",
        seed=1,
        status=Submission.Status.FAILED,
        started_at=now - timedelta(seconds=9),
        finished_at=now - timedelta(seconds=4),
    )
    waiting = services.submission_create(user=user, exercise=exercise, code="x = 1", now=now)
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        new = services.submission_create(user=user, exercise=exercise, code="x = 2", now=now)
    expected = submission_priority(submission_id=new.pk, now=now)
    assert expected == fair_share_priority(sandbox_seconds=5.0, waiting_ahead=1) > 0
    new.refresh_from_db()
    assert new.priority == expected == published[-1]
    assert waiting.pk < new.pk
    assert not [q for q in queries if q["sql"].startswith("UPDATE")]


# --- With a real worker ---------------------------------------------------------------------


def _burn_and_then_submit_honestly(*, history: bool) -> tuple[list[int], int]:
    """Three burners (with a graded slow submission each first, if history) queue a burst of
    slow submissions, then an honest student submits a correct one."""
    burners = [_client(f"burner{i}") for i in range(BURNERS)]
    if history:
        _all_final([submit(c, SLOW) for c in burners], timeout=90)
    queued = [submit(c, SLOW) for c in burners for _ in range(BURST)]
    honest = submit(_client("honest"), CORRECT)
    _all_final([*queued, honest], timeout=180)
    assert Submission.objects.get(pk=honest).status == Submission.Status.PASSED
    return queued, honest


@pytest.mark.stack
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_an_honest_submission_passes_a_burst_of_burners_queued_ones(worker: Worker) -> None:
    queued, honest = _burn_and_then_submit_honestly(history=False)
    # No burner has spent a second yet, so only their backlogs order the queue: each burner's
    # first submission is at the honest one's level (the one running, and two more), every
    # later one behind it. In arrival order (no priorities) all twelve came first.
    assert _finished_before(queued, honest) <= BURNERS + 1


@pytest.mark.stack
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_burners_recent_sandbox_seconds_put_their_queued_ones_behind(worker: Worker) -> None:
    queued, honest = _burn_and_then_submit_honestly(history=True)
    # Each burner spent a sandbox second: all of their queued ones go behind the honest one,
    # but the one already running when it arrived (and one more, on a slow machine).
    assert _finished_before(queued, honest) <= 2


@pytest.mark.stack
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_without_priorities_the_honest_submission_waits_behind_the_burners(
    worker: Worker, settings
) -> None:
    # The control: what the two tests above guard against (the submissions publish from here).
    settings.GRADER_FAIR_SHARE_PRIORITIES = False
    queued, honest = _burn_and_then_submit_honestly(history=True)
    assert _finished_before(queued, honest) >= len(queued) - 2
