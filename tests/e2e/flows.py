"""Steps the browser tests share (fixtures are in conftest.py)."""

from __future__ import annotations

from django.utils import timezone
from playwright.sync_api import Page, expect

from grader.engine import reference
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.kinds.attention_mistakes import attention_missing_scale
from grader.models import Exercise, Regrade, RegradeNotice, Submission
from grader.services.grading import submission_grade
from tests.factories import student_create, submission_create
from tests.pipeline.stack import golden

ATTENTION_EXERCISE = "/exercises/scaled-dot-product-attention/"
# A grade goes through Redis, a worker and the sandbox on a machine other tests load too, and
# the workers yield the CPU to the web: a generous bound, never the expected time.
VERDICT_TIMEOUT_MS = 90_000


def submit_code(page: Page, code: str, exercise: str = ATTENTION_EXERCISE) -> None:
    """Put `code` in the exercise's editor and submit it with the keyboard (Ctrl+Enter)."""
    page.goto(exercise)
    editor = page.locator("#editor")
    expect(editor).to_be_visible()  # Ace replaced the plain textarea
    page.evaluate("code => window.codeEditor.setValue(code, 1)", code)
    editor.click()
    page.keyboard.press("Control+Enter")


# Example answers a question keeps for a browser test of its Validate page (see below).
EXAMPLES_KEPT_PER_KIND = 3


def example_answers_sampled(question) -> int:  # type: ignore[no-untyped-def]
    """Keep a sample of the question's example answers (in this test's database only); how
    many are left.

    The Validate page runs the assessor on every example answer of the question on each load,
    and the seeded main question has about 700 (the evaluation set): some 3 s of CPU on an idle
    core, over the browser's 15 s page timeout on a loaded 2-core machine. A test of how that
    page looks needs its rows, not all of them: the first few of each kind (per follow-up, with
    and without an expected wrong answer or key points) and the longest one, so the page's time
    no longer grows with the content. The page on the full set is tested without a browser
    (tests/questions/test_admin.py).
    """
    kinds: dict[tuple[object, ...], list[int]] = {}
    longest, longest_len = None, -1
    for pk, follow_up, wrong, points, text in question.example_answers.order_by("pk").values_list(
        "pk", "follow_up_id", "expected_wrong_answer", "expected_key_points", "text"
    ):
        kinds.setdefault((follow_up, bool(wrong), bool(points)), []).append(pk)
        if len(text) > longest_len:
            longest, longest_len = pk, len(text)
    keep = {pk for pks in kinds.values() for pk in pks[:EXAMPLES_KEPT_PER_KIND]} | {longest}
    question.example_answers.exclude(pk__in=keep).delete()
    return question.example_answers.count()


def student_with_two_verdicts(*, username: str, worker: str, **fields: str) -> dict[str, object]:
    """A student with a failed (misconception named, pictured) and a passed submission."""
    student = student_create(username=username, password="student-pass-123", **fields)
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    submissions = []
    for name, func in (
        ("missing_scale", attention_missing_scale),
        ("correct_matmul", reference.attention),
    ):
        row = submission_create(
            user=student,
            exercise=exercise,
            code=golden(name),
            seed=0,
            status=Submission.Status.QUEUED,
            queued_at=timezone.now(),
        )
        # Our own functions, in this process (never student text): the verdict a worker stores.
        submission_grade(submission_id=row.pk, worker=worker, executor=CallableExecutor(func))
        submissions.append(row)
    return {"student": student, "exercise": exercise, "submissions": submissions}


def regrade_with_notice(*submissions: Submission) -> Regrade:
    """A regrade that moved each submission: the first one's notice announced, the others' not."""
    exercise = submissions[0].exercise
    regrade = Regrade.objects.create(exercise=exercise, checks_changed_at=timezone.now())
    for index, submission in enumerate(submissions):
        RegradeNotice.objects.create(
            submission=submission,
            user=submission.user,
            regrade=regrade,
            announced=index == 0,
            old_status="failed",
            old_score=0.5,
            new_status="failed",
            new_score=0.75 if index == 0 else 0.52,
            reason="the exercise's checks changed on 2026-01-01",
        )
    return regrade


def staff_pages(*, exercise: Exercise, question, submission: Submission) -> list[str]:  # type: ignore[no-untyped-def]
    """The staff and admin pages about one exercise, one question and one submission."""
    return [
        "/staff/submissions/",
        f"/staff/exercises/{exercise.slug}/regrade/",
        "/staff/misconceptions/",
        f"/submissions/{submission.pk}/",
        f"/questions/{question.slug}/preview/",
        "/admin/",
        "/admin/questions/question/",
        f"/admin/questions/question/{question.pk}/change/",
        f"/admin/questions/question/{question.pk}/validate/",
        "/admin/questions/exampleanswer/",
        "/admin/grader/exercise/",
        f"/admin/grader/exercise/{exercise.pk}/change/",
        f"/admin/grader/exercise/{exercise.pk}/validate/",
        "/admin/grader/submission/",
        f"/admin/grader/submission/{submission.pk}/change/",
    ]


def course_with_students(*, instructor, student, peer_code: str | None = None) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """A course in Paris time taught by ``instructor``, ``student`` enrolled (before their
    submissions), an assignment of the attention exercise due in a week (10 % a day late) and
    one of a question; with ``peer_code``, a second student whose final submission is it, so
    the similarity report has a pair. Returns the course, the assignment and the staff and
    student paths of its pages."""
    from datetime import timedelta

    from courses.models import Membership
    from courses.services import (
        assignment_create,
        course_create,
        extension_grant,
        membership_set,
        score_override_set,
    )
    from questions.models import Question

    course = course_create(title="Attention 101", time_zone="Europe/Paris", created_by=instructor)
    membership = membership_set(course=course, user=student, role=Membership.Role.STUDENT)
    membership.created_at = timezone.now() - timedelta(days=30)
    membership.save(update_fields=["created_at"])
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    assignment = assignment_create(
        course=course,
        title="Scaled dot-product attention",
        exercise=exercise,
        due_at=timezone.now() + timedelta(days=7),
        late_policy="penalty",
        penalty_per_day=0.1,
        penalty_cap=0.5,
    )
    question = Question.objects.published().first()
    essay = assignment_create(course=course, title="Why divide by √d_k", question=question)
    extension_grant(
        assignment=assignment,
        users=[student],
        extra_days=2,
        note="Lab closed",
        granted_by=instructor,
    )
    score_override_set(
        assignment=essay,
        user=student,
        score=0.9,
        comment="Explained it in class",
        created_by=instructor,
    )
    if peer_code is not None:
        peer = student_create(username=f"{student.get_username()}-peer")
        peer_membership = membership_set(course=course, user=peer, role=Membership.Role.STUDENT)
        peer_membership.created_at = membership.created_at
        peer_membership.save(update_fields=["created_at"])
        submission_create(user=peer, exercise=exercise, code=peer_code, status="passed", score=1.0)
    base = f"/courses/{course.slug}"
    a = f"{base}/assignments/{assignment.pk}"
    return {
        "course": course,
        "assignment": assignment,
        "student_paths": ["/courses/", f"{base}/", f"{a}/", f"{base}/assignments/{essay.pk}/"],
        "staff_paths": [
            f"{base}/",
            f"{base}/gradebook/",
            f"{base}/members/",
            f"{a}/",
            f"{a}/extensions/",
            f"{a}/overrides/{student.pk}/",
            f"{a}/similarity/",
        ],
        "admin_paths": [
            "/admin/courses/course/",
            f"/admin/courses/course/{course.pk}/change/",
            f"/admin/courses/assignment/{assignment.pk}/change/",
        ],
    }
