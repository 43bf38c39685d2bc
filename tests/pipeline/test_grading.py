"""grader.services.grading against the database: a claimed grade, its verdict's write, release."""

from __future__ import annotations

import pytest

from grader.models import Exercise, Submission
from grader.services import grading, queue, submitting
from tests.pipeline.lifecycle import CountingRuns, make

pytestmark = pytest.mark.django_db


def test_a_worker_grades_a_new_submission_on_the_inputs_it_prepared(  # type: ignore[no-untyped-def]
    user, exercise, monkeypatch
) -> None:
    from grader.engine import grading as engine

    plans = grading._Plans()
    monkeypatch.setattr(grading, "_plans", plans)
    used: list[object] = []
    real_grade = engine.grade
    monkeypatch.setattr(engine, "grade", lambda **kw: used.append(kw["plan"]) or real_grade(**kw))
    from grader.engine.kinds import REFERENCE_SOURCES
    from tests.grader.fakes import SourceLookupExecutor

    code = REFERENCE_SOURCES["attention"]
    for _ in range(2):
        s = submitting.submission_create(user=user, exercise=exercise, code=code)
        assert (
            grading.submission_grade(
                submission_id=s.pk, worker="w:1", executor=SourceLookupExecutor()
            )
            == Submission.Status.PASSED
        )
    # The first had nothing prepared; the second got the plan made after the first verdict,
    # for the seed stored in its row at the claim.
    assert used[0] is None and used[1] is not None
    s.refresh_from_db()
    assert used[1].seed == s.seed and 0 <= s.seed < 2**31
    # The verdict is what grading that seed from scratch gives.
    assert s.status == Submission.Status.PASSED


def test_a_database_error_after_grading_retries_the_write_not_the_grade(
    user, exercise, monkeypatch, no_publish
) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    monkeypatch.setattr(grading, "VERDICT_WRITE_DELAYS", (0.0, 0.0, 0.0, 0.0), raising=False)
    real_finish = queue.submission_finish
    failures = iter([OperationalError("server closed the connection unexpectedly")])

    def flaky_finish(**kwargs):  # type: ignore[no-untyped-def]
        for error in failures:
            raise error
        return real_finish(**kwargs)

    monkeypatch.setattr(grading, "submission_finish", flaky_finish)
    s = make(user, exercise)
    executor = CountingRuns()
    status = grading.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=executor)
    assert status == Submission.Status.PASSED
    assert executor.runs == 1  # graded once; only the write was tried again
    s.refresh_from_db()
    assert (s.status, s.attempts, s.lease_expires_at) == (Submission.Status.PASSED, 1, None)
    assert no_publish == []


def test_a_grade_that_cannot_store_its_verdict_releases_the_row(
    user, exercise, monkeypatch, no_publish
) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    monkeypatch.setattr(grading, "VERDICT_WRITE_DELAYS", (0.0, 0.0), raising=False)

    def broken_finish(**kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("database is locked")

    monkeypatch.setattr(grading, "submission_finish", broken_finish)
    s = make(user, exercise)
    executor = CountingRuns()
    assert grading.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=executor) is None
    s.refresh_from_db()
    # Handed back at once (and published again), not held until its lease runs out.
    assert s.status == Submission.Status.QUEUED
    assert s.lease_expires_at is None
    assert no_publish == [s.pk]
    assert queue.submission_claim(submission_id=s.pk, worker="w2:2:b") is not None


def test_an_error_after_the_claim_releases_the_row(user, exercise, monkeypatch, no_publish) -> None:  # type: ignore[no-untyped-def]
    from django.db import OperationalError

    from grader.selectors import exercises as selectors

    def spec_unreadable(**kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(selectors, "exercise_spec_for_grading", spec_unreadable)
    s = make(user, exercise)
    with pytest.raises(OperationalError):  # the task's own retry takes it from here
        grading.submission_grade(submission_id=s.pk, worker="w1:1:a", executor=CountingRuns())
    s.refresh_from_db()
    assert s.status == Submission.Status.QUEUED
    assert queue.submission_claim(submission_id=s.pk, worker="w1:1:b") is not None


def test_a_worker_reads_an_exercises_checks_again_only_after_a_change(exercise) -> None:  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from grader.selectors.exercises import exercise_spec_for_grading

    first = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    with CaptureQueriesContext(connection) as queries:
        again = exercise_spec_for_grading(exercise=exercise)
    assert again is first and len(queries) == 0

    check = exercise.checks.first()
    check.weight = 7.0
    check.save()  # moves the exercise's updated_at: the spec held is stale
    changed = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    assert changed.checks[0].weight == 7.0
    check.delete()
    after_delete = exercise_spec_for_grading(exercise=Exercise.objects.get(pk=exercise.pk))
    assert len(after_delete.checks) == len(changed.checks) - 1
