"""Reads of courses: who may see what, and the score that counts for a student on an
assignment under its late policy (one student, or a whole gradebook in a few queries)."""

from __future__ import annotations

import csv
import hashlib
import io
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from courses.models import Assignment, Course, Extension, Membership, ScoreOverride
from courses.policy import Lateness, lateness
from grader.models import Submission
from questions.models import Attempt

# Verdicts on the student's code; an internal error is ours and never counts.
COUNTED_STATUSES = (
    Submission.Status.PASSED,
    Submission.Status.FAILED,
    Submission.Status.ERROR,
)


# By due time, those without one last (SQLite and PostgreSQL place NULL apart by default).
ASSIGNMENT_ORDER = (F("due_at").asc(nulls_last=True), "id")


# --- Who may see what ------------------------------------------------------------------------


def membership_for(*, course: Course, user: AbstractBaseUser) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(course=course, user=user).first()


def course_is_staff(*, course: Course, user: AbstractBaseUser) -> bool:
    """An instructor or teaching assistant of this course (a superuser counts as one). Being
    staff of the site is not enough: a course's grades are its own staff's."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(
        course=course, user=user, role__in=Membership.STAFF_ROLES
    ).exists()


def course_is_instructor(*, course: Course, user: AbstractBaseUser) -> bool:
    """An instructor of this course: extensions, overrides and similarity are theirs."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(
        course=course, user=user, role=Membership.Role.INSTRUCTOR
    ).exists()


def courses_for(*, user: AbstractBaseUser) -> QuerySet[Course]:
    """The courses ``user`` belongs to (every course for a superuser)."""
    if not user.is_authenticated:
        return Course.objects.none()
    if user.is_superuser:
        return Course.objects.all()
    return Course.objects.filter(memberships__user=user).distinct()


def courses_staffed_by(*, user: AbstractBaseUser) -> QuerySet[Course]:
    if not user.is_authenticated:
        return Course.objects.none()
    if user.is_superuser:
        return Course.objects.all()
    return Course.objects.filter(
        memberships__user=user, memberships__role__in=Membership.STAFF_ROLES
    ).distinct()


def students_of(*, course: Course) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(course=course, role=Membership.Role.STUDENT)
        .select_related("user")
        .order_by("user__username")
    )


def assignments_of(*, course: Course, user: AbstractBaseUser | None = None) -> QuerySet[Assignment]:
    """The course's assignments; a student (not staff) sees only the opened ones."""
    rows = (
        Assignment.objects.filter(course=course)
        .select_related("course", "exercise", "question")
        .order_by(*ASSIGNMENT_ORDER)
    )
    if user is not None and not course_is_staff(course=course, user=user):
        rows = rows.filter(Q(opens_at__isnull=True) | Q(opens_at__lte=timezone.now()))
    return rows


# --- The score that counts -------------------------------------------------------------------


@dataclass(frozen=True)
class CountingScore:
    """The score that counts for one student on one assignment, and where it came from."""

    score: float  # in [0, 1], the late penalty applied (or the override's)
    submission_id: int | None = None
    attempt_id: int | None = None
    raw_score: float | None = None  # before the late penalty
    late_penalty: float = 0.0  # the fraction taken off
    days_late: int = 0
    overridden: bool = False
    override_comment: str = ""
    override_by: str = ""
    override_at: datetime | None = None

    @property
    def late(self) -> bool:
        return self.days_late > 0


@dataclass(frozen=True)
class Candidate:
    """A submission or an answer that may count: its score and when it was received."""

    score: float
    received_at: datetime
    submission_id: int | None = None
    attempt_id: int | None = None


def counting_pick(
    *,
    assignment: Assignment,
    candidates: Iterable[Candidate],
    extension: Extension | None = None,
    override: ScoreOverride | None = None,
) -> CountingScore | None:
    """The best candidate under the late policy (the earliest of equals), or the override."""
    if override is not None:
        return CountingScore(
            score=override.score,
            overridden=True,
            override_comment=override.comment,
            override_by=override.created_by.get_username() if override.created_by else "",
            override_at=override.created_at,
        )
    policy = assignment.policy_for(extension)
    best: tuple[float, Candidate, Lateness] | None = None
    for candidate in sorted(candidates, key=lambda c: (c.received_at, c.submission_id or 0)):
        if assignment.opens_at is not None and candidate.received_at < assignment.opens_at:
            continue
        late = lateness(policy=policy, submitted_at=candidate.received_at)
        if not late.accepted:
            continue
        score = late.apply(candidate.score)
        if best is None or score > best[0]:
            best = (score, candidate, late)
    if best is None:
        return None
    score, candidate, late = best
    return CountingScore(
        score=score,
        submission_id=candidate.submission_id,
        attempt_id=candidate.attempt_id,
        raw_score=candidate.score,
        late_penalty=late.penalty,
        days_late=late.days_late,
    )


def _attempt_score(assessment: dict[str, Any]) -> float | None:
    score = assessment.get("score")
    return float(score) if isinstance(score, int | float) else None


def _candidates(
    *, assignments: Sequence[Assignment], memberships: Sequence[Membership]
) -> dict[tuple[int, int], list[Candidate]]:
    """Every submission or answer made while enrolled, by (assignment id, user id)."""
    enrolled_at = {m.user_id: m.created_at for m in memberships}
    users = list(enrolled_at)
    by_exercise: dict[int, list[Assignment]] = {}
    by_question: dict[int, list[Assignment]] = {}
    for a in assignments:
        if a.exercise_id is not None:
            by_exercise.setdefault(a.exercise_id, []).append(a)
        else:
            by_question.setdefault(a.question_id, []).append(a)
    out: dict[tuple[int, int], list[Candidate]] = {}
    if by_exercise and users:
        rows = Submission.objects.filter(
            exercise_id__in=list(by_exercise),
            user_id__in=users,
            status__in=COUNTED_STATUSES,
            score__isnull=False,
        ).values_list("pk", "user_id", "exercise_id", "score", "received_at")
        for pk, user_id, exercise_id, score, received_at in rows:
            if received_at < enrolled_at[user_id]:
                continue
            for a in by_exercise[exercise_id]:
                out.setdefault((a.pk, user_id), []).append(
                    Candidate(score=score, received_at=received_at, submission_id=pk)
                )
    if by_question and users:
        rows = Attempt.objects.filter(
            question_id__in=list(by_question), user_id__in=users, follow_up__isnull=True
        ).values_list("pk", "user_id", "question_id", "assessment", "created")
        for pk, user_id, question_id, assessment, created in rows:
            score = _attempt_score(assessment)
            if score is None or created < enrolled_at[user_id]:
                continue
            for a in by_question[question_id]:
                out.setdefault((a.pk, user_id), []).append(
                    Candidate(score=score, received_at=created, attempt_id=pk)
                )
    return out


def score_that_counts(
    *, assignment: Assignment, user: AbstractBaseUser, with_override: bool = True
) -> CountingScore | None:
    """The score that counts for ``user`` on ``assignment``; None if nothing counts yet (or
    they are not a student of its course). ``with_override=False``: the policy's score, as if
    no override were set."""
    membership = Membership.objects.filter(
        course_id=assignment.course_id, user=user, role=Membership.Role.STUDENT
    ).first()
    if membership is None:
        return None
    candidates = _candidates(assignments=[assignment], memberships=[membership])
    return counting_pick(
        assignment=assignment,
        candidates=candidates.get((assignment.pk, membership.user_id), []),
        extension=Extension.objects.filter(assignment=assignment, user=user).first(),
        override=ScoreOverride.objects.filter(assignment=assignment, user=user)
        .select_related("created_by")
        .first()
        if with_override
        else None,
    )


# --- The gradebook ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GradebookCell:
    assignment: Assignment
    counting: CountingScore | None
    extension: Extension | None = None


@dataclass(frozen=True)
class GradebookRow:
    membership: Membership
    cells: tuple[GradebookCell, ...]

    @property
    def user(self) -> AbstractBaseUser:
        return self.membership.user


@dataclass(frozen=True)
class Gradebook:
    course: Course
    assignments: tuple[Assignment, ...]
    rows: tuple[GradebookRow, ...] = field(default_factory=tuple)


def gradebook_for(*, course: Course, only_user: Any = None) -> Gradebook:
    """One row per student (or only ``only_user``'s), one cell per assignment."""
    assignments = tuple(
        Assignment.objects.filter(course=course)
        .select_related("course", "exercise", "question")
        .order_by(*ASSIGNMENT_ORDER)
    )
    memberships = students_of(course=course)
    if only_user is not None:
        memberships = memberships.filter(user=only_user)
    memberships = list(memberships)
    candidates = _candidates(assignments=assignments, memberships=memberships)
    extensions = {
        (e.assignment_id, e.user_id): e for e in Extension.objects.filter(assignment__course=course)
    }
    overrides = {
        (o.assignment_id, o.user_id): o
        for o in ScoreOverride.objects.filter(assignment__course=course).select_related(
            "created_by"
        )
    }
    rows = []
    for m in memberships:
        cells = []
        for a in assignments:
            key = (a.pk, m.user_id)
            cells.append(
                GradebookCell(
                    assignment=a,
                    counting=counting_pick(
                        assignment=a,
                        candidates=candidates.get(key, []),
                        extension=extensions.get(key),
                        override=overrides.get(key),
                    ),
                    extension=extensions.get(key),
                )
            )
        rows.append(GradebookRow(membership=m, cells=tuple(cells)))
    return Gradebook(course=course, assignments=assignments, rows=tuple(rows))


# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> str:
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_PREFIXES):
        return "'" + text
    return text


def gradebook_csv(*, gradebook: Gradebook) -> str:
    """The gradebook as CSV: username, email, then one score column per assignment (empty when
    nothing counts). Every text cell is made safe against formula injection."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [csv_safe(h) for h in ("username", "email", *(a.title for a in gradebook.assignments))]
    )
    for row in gradebook.rows:
        scores = [
            "" if cell.counting is None else f"{cell.counting.score:.4f}" for cell in row.cells
        ]
        writer.writerow([csv_safe(row.user.get_username()), csv_safe(row.user.email), *scores])
    return out.getvalue()


# --- An assignment's statistics -----------------------------------------------------------------


@dataclass(frozen=True)
class AssignmentStats:
    students: int
    submitted: int  # students with something that counts
    passed: int  # of them, with a counting score of 1
    median_score: float | None
    misconception: str | None  # the most common code among the counting submissions
    misconception_count: int = 0


def assignment_stats(*, assignment: Assignment) -> AssignmentStats:
    gradebook = gradebook_for(course=assignment.course)
    index = next(i for i, a in enumerate(gradebook.assignments) if a.pk == assignment.pk)
    counting = [row.cells[index].counting for row in gradebook.rows]
    scores = [c.score for c in counting if c is not None]
    submission_ids = [c.submission_id for c in counting if c is not None and c.submission_id]
    codes: Counter[str] = Counter()
    for diagnosis in Submission.objects.filter(pk__in=submission_ids).values_list(
        "diagnosis", flat=True
    ):
        codes.update(code for code in diagnosis or [] if isinstance(code, str))
    common = codes.most_common(1)
    return AssignmentStats(
        students=len(gradebook.rows),
        submitted=len(scores),
        passed=sum(1 for s in scores if s >= 1.0),
        median_score=statistics.median(scores) if scores else None,
        misconception=common[0][0] if common else None,
        misconception_count=common[0][1] if common else 0,
    )


def assignments_for_exercise(*, exercise_id: int, user_id: int) -> list[int]:
    """The assignments of ``exercise_id`` in the courses where ``user_id`` is a student."""
    return list(
        Assignment.objects.filter(
            exercise_id=exercise_id,
            course__memberships__user_id=user_id,
            course__memberships__role=Membership.Role.STUDENT,
        ).values_list("pk", flat=True)
    )


def assignments_for_question(*, question_id: int, user_id: int) -> list[int]:
    return list(
        Assignment.objects.filter(
            question_id=question_id,
            course__memberships__user_id=user_id,
            course__memberships__role=Membership.Role.STUDENT,
        ).values_list("pk", flat=True)
    )


# --- A student's course page -----------------------------------------------------------------

STATE_OPEN = "Open"
STATE_DONE = "Done"
STATE_LATE = "Late: still accepted"
STATE_CLOSED = "Closed"


@dataclass(frozen=True)
class StudentAssignment:
    assignment: Assignment
    due_at: datetime | None  # the student's own, their extension applied
    extension: Extension | None
    counting: CountingScore | None
    state: str


def student_assignments(*, course: Course, user: AbstractBaseUser) -> list[StudentAssignment]:
    """The opened assignments of ``course`` as ``user`` sees them: when each is due for them,
    its state and the score that counts."""
    now = timezone.now()
    gradebook = gradebook_for(course=course, only_user=user)
    cells = gradebook.rows[0].cells if gradebook.rows else ()
    out = []
    for cell in cells:
        a = cell.assignment
        if not a.is_open(now=now):
            continue
        policy = a.policy_for(cell.extension)
        accepted_now = lateness(policy=policy, submitted_at=now).accepted
        if cell.counting is not None:
            state = STATE_DONE
        elif policy.due_at is None or now <= policy.due_at:
            state = STATE_OPEN
        elif accepted_now:
            state = STATE_LATE
        else:
            state = STATE_CLOSED
        out.append(
            StudentAssignment(
                assignment=a,
                due_at=policy.due_at,
                extension=cell.extension,
                counting=cell.counting,
                state=state,
            )
        )
    return out


def student_assignment(*, assignment: Assignment, user: AbstractBaseUser) -> StudentAssignment:
    extension = Extension.objects.filter(assignment=assignment, user=user).first()
    counting = score_that_counts(assignment=assignment, user=user)
    policy = assignment.policy_for(extension)
    now = timezone.now()
    if counting is not None:
        state = STATE_DONE
    elif policy.due_at is None or now <= policy.due_at:
        state = STATE_OPEN
    elif lateness(policy=policy, submitted_at=now).accepted:
        state = STATE_LATE
    else:
        state = STATE_CLOSED
    return StudentAssignment(
        assignment=assignment,
        due_at=policy.due_at,
        extension=extension,
        counting=counting,
        state=state,
    )


# --- What course staff may open --------------------------------------------------------------


def course_submission_get(*, assignment: Assignment, submission_id: int) -> Submission | None:
    """A submission to this assignment's exercise by a student of its course, else None."""
    if assignment.exercise_id is None:
        return None
    return (
        Submission.objects.filter(
            pk=submission_id,
            exercise_id=assignment.exercise_id,
            user__course_memberships__course_id=assignment.course_id,
            user__course_memberships__role=Membership.Role.STUDENT,
        )
        .select_related("user", "exercise")
        .first()
    )


def course_attempt_get(*, assignment: Assignment, attempt_id: int) -> Attempt | None:
    if assignment.question_id is None:
        return None
    return (
        Attempt.objects.filter(
            pk=attempt_id,
            question_id=assignment.question_id,
            follow_up__isnull=True,
            user__course_memberships__course_id=assignment.course_id,
            user__course_memberships__role=Membership.Role.STUDENT,
        )
        .select_related("user", "question")
        .first()
    )


# --- Similarity ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimilarityRow:
    left: Submission
    right: Submission
    pair: Any  # courses.similarity.Pair


@dataclass(frozen=True)
class SimilarityReport:
    compared: int  # students with a final submission
    threshold: float
    rows: tuple[SimilarityRow, ...]


def final_submissions(*, assignment: Assignment) -> dict[int, Submission]:
    """Each student's last graded submission that the policy accepts, by user id."""
    if assignment.exercise_id is None:
        return {}
    memberships = list(students_of(course=assignment.course))
    enrolled_at = {m.user_id: m.created_at for m in memberships}
    extensions = {e.user_id: e for e in Extension.objects.filter(assignment=assignment)}
    rows = Submission.objects.filter(
        exercise_id=assignment.exercise_id,
        user_id__in=list(enrolled_at),
        status__in=COUNTED_STATUSES,
    ).select_related("user")
    final: dict[int, Submission] = {}
    for row in rows.order_by("received_at", "id"):
        if row.received_at < enrolled_at[row.user_id]:
            continue
        if assignment.opens_at is not None and row.received_at < assignment.opens_at:
            continue
        policy = assignment.policy_for(extensions.get(row.user_id))
        if lateness(policy=policy, submitted_at=row.received_at).accepted:
            final[row.user_id] = row
    return final


# A report is computed when its page is opened (seconds for a large class) and kept this long,
# under a key that changes with any student's final submission, the starter code or the threshold.
SIMILARITY_CACHE_SECONDS = 600


def similarity_report(
    *, assignment: Assignment, threshold: float | None = None
) -> SimilarityReport:
    """The pairs of final submissions at least ``threshold`` alike (the assignment's own by
    default), the exercise's starter code left out as boilerplate."""
    from courses.similarity import similar_pairs

    threshold = assignment.similarity_threshold if threshold is None else threshold
    final = final_submissions(assignment=assignment)
    # By username, so a pair reads in the same order on every visit.
    ordered = sorted(final.items(), key=lambda kv: kv[1].user.get_username())
    starter = assignment.exercise.starter_code if assignment.exercise_id else ""
    fingerprint = hashlib.sha256(
        repr((threshold, starter, [(u, row.pk) for u, row in ordered])).encode()
    ).hexdigest()
    key = f"courses:similarity:{assignment.pk}:{fingerprint}"
    pairs = cache.get(key)
    if pairs is None:
        pairs = similar_pairs(
            codes={user_id: row.code for user_id, row in ordered},
            boilerplate=starter,
            threshold=threshold,
        )
        cache.set(key, pairs, SIMILARITY_CACHE_SECONDS)
    return SimilarityReport(
        compared=len(final),
        threshold=threshold,
        rows=tuple(SimilarityRow(left=final[p.left], right=final[p.right], pair=p) for p in pairs),
    )
