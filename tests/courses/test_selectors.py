"""The score that counts, the gradebook, its CSV and an assignment's statistics."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from courses import selectors, services
from tests.courses.conftest import DUE, ENROLLED
from tests.factories import (
    assignment_create,
    exercise_get,
    question_get,
    submission_create,
    user_create,
)

pytestmark = pytest.mark.django_db


def submit(user, *, score: float, at: datetime, status: str = "failed", **fields):
    return submission_create(
        user=user,
        status="passed" if score == 1.0 else status,
        score=score,
        received_at=at,
        **fields,
    )


def test_nothing_counts_before_a_submission(world) -> None:
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ann) is None


def test_the_best_on_time_submission_counts(world) -> None:
    submit(world.ann, score=0.5, at=DUE - timedelta(days=2))
    best = submit(world.ann, score=0.8, at=DUE - timedelta(days=1))
    submit(world.ann, score=0.6, at=DUE - timedelta(hours=1))
    counting = selectors.score_that_counts(assignment=world.assignment, user=world.ann)
    assert (counting.score, counting.submission_id, counting.late) == (0.8, best.pk, False)


def test_a_late_submission_counts_with_its_penalty_if_it_beats_the_rest(world) -> None:
    submit(world.ann, score=0.5, at=DUE - timedelta(days=1))
    late = submit(world.ann, score=1.0, at=DUE + timedelta(hours=1))
    counting = selectors.score_that_counts(assignment=world.assignment, user=world.ann)
    assert counting.submission_id == late.pk
    assert counting.score == pytest.approx(0.9)
    assert (counting.days_late, counting.late_penalty, counting.raw_score) == (1, 0.1, 1.0)


def test_a_late_submission_that_the_penalty_sinks_does_not_count(world) -> None:
    on_time = submit(world.ann, score=0.85, at=DUE - timedelta(days=1))
    submit(world.ann, score=1.0, at=DUE + timedelta(days=2))  # 0.8 after 20 %
    counting = selectors.score_that_counts(assignment=world.assignment, user=world.ann)
    assert (counting.submission_id, counting.score) == (on_time.pk, 0.85)


def test_an_extension_moves_the_due_time(world) -> None:
    late = submit(world.ann, score=1.0, at=DUE + timedelta(days=1, hours=-1))
    services.extension_grant(assignment=world.assignment, users=[world.ann], extra_days=2)
    counting = selectors.score_that_counts(assignment=world.assignment, user=world.ann)
    assert (counting.submission_id, counting.score, counting.late) == (late.pk, 1.0, False)
    # Bob, without an extension, pays for the same lateness.
    submit(world.bob, score=1.0, at=DUE + timedelta(days=1, hours=-1))
    assert selectors.score_that_counts(assignment=world.assignment, user=world.bob).score == 0.9


def test_submissions_before_enrolment_or_opening_do_not_count(world) -> None:
    submit(world.ann, score=1.0, at=ENROLLED - timedelta(days=1))
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ann) is None
    world.assignment.opens_at = ENROLLED + timedelta(days=5)
    world.assignment.save()
    submit(world.ann, score=1.0, at=ENROLLED + timedelta(days=1))
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ann) is None


def test_internal_errors_and_waiting_submissions_never_count(world) -> None:
    submission_create(user=world.ann, status="internal-error", received_at=DUE - timedelta(days=1))
    submission_create(user=world.ann, status="queued", received_at=DUE - timedelta(days=1))
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ann) is None


def test_an_override_wins_and_removing_it_undoes_it(world) -> None:
    submit(world.ann, score=0.5, at=DUE - timedelta(days=1))
    override = services.score_override_set(
        assignment=world.assignment,
        user=world.ann,
        score=0.95,
        comment="Oral explanation was complete",
        created_by=world.teacher,
    )
    counting = selectors.score_that_counts(assignment=world.assignment, user=world.ann)
    assert (counting.score, counting.overridden, counting.override_by) == (0.95, True, "teacher")
    assert counting.override_comment == "Oral explanation was complete"
    policy = selectors.score_that_counts(
        assignment=world.assignment, user=world.ann, with_override=False
    )
    assert policy.score == 0.5
    services.score_override_remove(override=override)
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ann).score == 0.5


def test_a_question_assignment_counts_answers(world) -> None:
    from questions.models import Attempt

    question = question_get()
    assignment = assignment_create(course=world.course, title="Why √d", question=question)
    attempt = Attempt.objects.create(
        user=world.ann, question=question, text="because", assessment={"score": 0.7}
    )
    counting = selectors.score_that_counts(assignment=assignment, user=world.ann)
    assert (counting.score, counting.attempt_id) == (0.7, attempt.pk)


def test_a_non_student_has_no_score(world) -> None:
    submit(world.ta, score=1.0, at=DUE - timedelta(days=1))
    assert selectors.score_that_counts(assignment=world.assignment, user=world.ta) is None


def test_the_gradebook_has_one_row_per_student_and_one_column_per_assignment(world) -> None:
    softmax = assignment_create(
        course=world.course, title="Softmax", exercise=exercise_get(slug="stable-softmax")
    )
    row = submit(world.ann, score=0.8, at=DUE - timedelta(days=1))
    book = selectors.gradebook_for(course=world.course)
    assert [r.user.username for r in book.rows] == ["ann", "bob"]
    assert [a.pk for a in book.assignments] == [world.assignment.pk, softmax.pk]
    ann = book.rows[0]
    assert ann.cells[0].counting.submission_id == row.pk
    assert ann.cells[1].counting is None
    assert book.rows[1].cells[0].counting is None


def test_the_csv_has_the_scores_and_defuses_formulas(world) -> None:
    evil = user_create(username="=cmd", email="@SUM(1+1)@example.org")
    services.membership_set(course=world.course, user=evil, role="student")
    world.assignment.title = "+Attention"
    world.assignment.save()
    submit(world.ann, score=0.8, at=DUE - timedelta(days=1))
    text = selectors.gradebook_csv(gradebook=selectors.gradebook_for(course=world.course))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["username", "email", "'+Attention"]
    assert rows[1] == ["'=cmd", "'@SUM(1+1)@example.org", ""]
    assert rows[2] == ["ann", "ann@example.org", "0.8000"]
    assert rows[3] == ["bob", "bob@example.org", ""]


@pytest.mark.parametrize("value", ["=1+1", "+1", "-1", "@A1", "\tx", "\rx"])
def test_csv_safe_prefixes_formula_starts(value: str) -> None:
    assert selectors.csv_safe(value) == "'" + value


def test_statistics(world) -> None:
    carol = user_create(username="carol")
    services.membership_set(course=world.course, user=carol, role="student")
    submit(world.ann, score=1.0, at=DUE - timedelta(days=1))
    submit(world.bob, score=0.4, at=DUE - timedelta(days=1), diagnosis=["missing-scale"])
    stats = selectors.assignment_stats(assignment=world.assignment)
    assert (stats.students, stats.submitted, stats.passed) == (3, 2, 1)
    assert stats.median_score == pytest.approx(0.7)
    assert (stats.misconception, stats.misconception_count) == ("missing-scale", 1)


def test_student_course_page_states(world) -> None:
    now = datetime.now(UTC)
    softmax, multi_head = (
        exercise_get(slug="stable-softmax"),
        exercise_get(slug="multi-head-attention"),
    )
    closed = assignment_create(
        course=world.course, title="Closed", exercise=softmax, due_at=now - timedelta(days=1)
    )
    open_ = assignment_create(
        course=world.course, title="Open", exercise=multi_head, due_at=now + timedelta(days=1)
    )
    assignment_create(
        course=world.course,
        title="Later",
        opens_at=now + timedelta(days=1),
        due_at=now + timedelta(days=2),
    )
    submit(world.ann, score=0.9, at=DUE - timedelta(days=1))
    rows = {
        r.assignment.title: r.state
        for r in selectors.student_assignments(course=world.course, user=world.ann)
    }
    assert rows == {
        "Attention": selectors.STATE_DONE,
        "Closed": selectors.STATE_CLOSED,
        "Open": selectors.STATE_OPEN,
    }
    assert closed.pk and open_.pk


def test_permissions_by_course_role(world) -> None:
    c = world.course
    assert selectors.course_is_staff(course=c, user=world.ta)
    assert not selectors.course_is_instructor(course=c, user=world.ta)
    assert selectors.course_is_instructor(course=c, user=world.teacher)
    assert not selectors.course_is_staff(course=c, user=world.ann)
    site_staff = user_create(username="site-staff", is_staff=True)
    assert not selectors.course_is_staff(course=c, user=site_staff)
