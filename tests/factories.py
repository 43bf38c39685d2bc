"""Builders for the rows tests need: users, exercises, submissions and questions.

Plain functions, keyword arguments only, each building exactly what its arguments say and
nothing else (no random values: a test that needs two users names them). The conftest fixtures
(`instructor`, `student_page`, tests/questions' `alice` and `bob`) are made with them; a test
that needs more rows calls them itself:

    ann = student_create(username="ann", password="pw-ann-123")
    row = submission_create(user=ann, status="failed", score=0.5, diagnosis=["missing-scale"])

The exercises and questions are the seeded ones (migrations load them, and the `seed_content`
fixture puts them back after a transactional test's flush): get them by slug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractUser

    from grader.models import Exercise, Submission
    from questions.models import Question

# The seeded exercise most tests grade against.
ATTENTION = "scaled-dot-product-attention"


def user_create(
    *,
    username: str,
    password: str | None = None,
    email: str = "",
    is_staff: bool = False,
    instructor: bool = False,
    **fields: Any,
) -> AbstractUser:
    """A user. No password means an unusable one (log in with force_login). ``instructor``
    adds the Instructors group (authoring rights) and makes the user staff."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(
        username, email=email, password=password, is_staff=is_staff or instructor, **fields
    )
    if instructor:
        from accounts.roles import instructors_group_sync

        user.groups.add(instructors_group_sync())
    return user


def student_create(
    *, username: str = "student", password: str | None = None, email: str = ""
) -> AbstractUser:
    """A student: no staff status, no group."""
    return user_create(username=username, password=password, email=email)


def instructor_create(
    *, username: str = "instructor", password: str | None = None, email: str = ""
) -> AbstractUser:
    """A staff user in the Instructors group (authoring rights on content, nothing more)."""
    return user_create(username=username, password=password, email=email, instructor=True)


def superuser_create(*, username: str = "root", password: str | None = None) -> AbstractUser:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser(username, password=password)


def exercise_get(*, slug: str = ATTENTION) -> Exercise:
    """A seeded exercise, by slug."""
    from grader.models import Exercise

    return Exercise.objects.get(slug=slug)


def submission_create(
    *,
    user: AbstractUser,
    exercise: Exercise | None = None,
    code: str = "x",
    seed: int = 1,
    status: str | None = None,
    score: float | None = None,
    **fields: Any,
) -> Submission:
    """A stored submission row, as the pipeline would have left it (no task is published).

    ``exercise`` defaults to the seeded attention exercise; ``status`` to the model's default
    (queued). Any other field (diagnosis, checks, finished_at, ...) passes through."""
    from grader.models import Submission

    if status is not None:
        fields["status"] = status
    return Submission.objects.create(
        user=user,
        exercise=exercise if exercise is not None else exercise_get(),
        code=code,
        seed=seed,
        score=score,
        **fields,
    )


def question_get(*, slug: str | None = None) -> Question:
    """A seeded question by slug, or the first published one."""
    from questions.models import Question

    if slug is None:
        return Question.objects.published().first()
    return Question.objects.get(slug=slug)


def course_create(*, title: str = "Attention 101", time_zone: str = "UTC", instructor: Any = None):
    """A course through the service (its ``instructor``, if given, is its first instructor)."""
    from courses.services import course_create as create

    return create(title=title, time_zone=time_zone, created_by=instructor)


def membership_create(*, course: Any, user: AbstractUser, role: str = "student", when: Any = None):
    """``user`` in ``course`` with ``role``; ``when`` backdates the enrolment (submissions made
    before it do not count)."""
    from courses.services import membership_set

    membership = membership_set(course=course, user=user, role=role)
    if when is not None:
        membership.created_at = when
        membership.save(update_fields=["created_at"])
    return membership


def assignment_create(*, course: Any, title: str = "Attention", **fields: Any):
    """An assignment of the seeded attention exercise unless ``question`` is given."""
    from courses.services import assignment_create as create

    if "question" not in fields and "exercise" not in fields:
        fields["exercise"] = exercise_get()
    return create(course=course, title=title, **fields)
