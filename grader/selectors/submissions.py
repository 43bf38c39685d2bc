"""Reads of submissions, with what each viewer may see."""

from __future__ import annotations

import difflib
import math
import re
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from grader.engine import messages as check_messages
from grader.engine.checks.base import readable_error
from grader.engine.grading import MSG_STOPPED, visible_message
from grader.engine.messages import as_math
from grader.engine.misconceptions import misconception_describe
from grader.engine.sandbox import messages as sandbox_messages
from grader.models import Exercise, ExerciseCheck, RegradePreview, Submission
from grader.selectors.exercises import exercise_published_q
from grader.selectors.misconceptions import misconceptions_described

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

MSG_CHECK_HIDDEN = "The details of this check are hidden."
MSG_CHECK_AFTER_DEADLINE = "The details of this check are shown after the deadline."
# Where a queued submission stands, shown by the result panel while it polls.
MSG_QUEUE_NEXT = "next to be graded"
MSG_QUEUE_AHEAD = "{ahead} ahead of you"
MSG_QUEUE_ESTIMATE = "about {duration}"
MSG_QUEUE_UNDER_A_SECOND = "less than a second"
# The estimate of the whole wait, beside the time already waited, so it is never below it.
MSG_QUEUE_WAITED = "waited {waited}, about {total} in all"
MSG_QUEUE_PASSED = "waited {waited}, a few seconds more"

# The queue estimate: the median grade of this many recently finished submissions and of those
# running now (their time so far: a grade slower than usual raises it at once), shared by the
# workers busy now, else by those seen finishing one within the window (a worker identity is
# one pool process). A running row older than the window is a dead worker's, not a busy one.
QUEUE_SAMPLE_SIZE = 50
QUEUE_WORKERS_WINDOW = timedelta(minutes=5)
# Less time left than this, by the measured rates: the estimate has passed, say so vaguely.
QUEUE_FEW_SECONDS = 1.0
# The recent grade rate is an estimate's input: read at most this often per process, not at
# every submit and every poll of a waiting page (one query each, on the busiest paths).
GRADE_RATE_TTL_SECONDS = 2.0


def submissions_of_user(*, user: AbstractBaseUser, exercise: Exercise | None = None) -> QuerySet:
    """The user's own submissions, of published exercises only (what a student may see)."""
    qs = Submission.objects.filter(exercise_published_q(via="exercise__"), user=user)
    qs = qs.select_related("exercise")
    return qs.filter(exercise=exercise) if exercise is not None else qs


def submission_queue_position(*, submission: Submission) -> int | None:
    """1 for the next queued submission to be graded, 2 for the one after...; None once it
    runs or is done. Counted in the broker's order (fair-share priority, then arrival): a
    submission published later with a lower priority can still pass this one."""
    if submission.status != Submission.Status.QUEUED or submission.queued_at is None:
        return None
    if submission.queue_position_at_insert is not None:
        return submission.queue_position_at_insert
    ahead = Submission.objects.filter(
        queued_ahead_of(priority=submission.priority, queued_at=submission.queued_at)
    ).count()
    return ahead + 1


def queued_ahead_of(*, priority: int, queued_at: Any) -> Q:
    """The queued rows the broker serves before a row of ``priority`` queued at ``queued_at``:
    lower priorities first, and each priority in order (fair share)."""
    return Q(status=Submission.Status.QUEUED) & (
        Q(priority__lt=priority) | Q(priority=priority, queued_at__lt=queued_at)
    )


def submission_queue_ahead(*, submission: Submission) -> int | None:
    """How many queued submissions are before this one (0: it is next); None once it runs."""
    position = submission_queue_position(submission=submission)
    return None if position is None else position - 1


@dataclass(frozen=True)
class GradeRate:
    """What recent grades measured: the median seconds of one grade and how many workers;
    when each grade running now started (their workers are the busy ones)."""

    median_seconds: float | None
    workers: int
    running_since: tuple[Any, ...] = ()
    finished_seconds: tuple[float, ...] = field(default=(), compare=False, repr=False)

    def median_at(self, now: Any) -> float | None:
        """The median grade counting the running ones' time so far at ``now``."""
        if not self.running_since:
            return self.median_seconds
        running = [max((now - since).total_seconds(), 0.0) for since in self.running_since]
        return statistics.median([*self.finished_seconds, *running])


_grade_rate_kept: tuple[float, GradeRate] | None = None  # (monotonic expiry, rate)


def grade_rate_recent() -> GradeRate:
    """The median of finished_at - started_at over the latest QUEUE_SAMPLE_SIZE finished
    submissions, and the number of distinct workers that finished one lately (at least 1).
    One query, at most every GRADE_RATE_TTL_SECONDS per process."""
    global _grade_rate_kept
    kept = _grade_rate_kept
    now = time.monotonic()
    if kept is not None and kept[0] > now:
        return kept[1]
    rate = _grade_rate_read(sample=QUEUE_SAMPLE_SIZE)
    _grade_rate_kept = (now + GRADE_RATE_TTL_SECONDS, rate)
    return rate


def grade_rate_forget() -> None:
    """Drop the kept grade rate (tests; the next estimate reads it again)."""
    global _grade_rate_kept
    _grade_rate_kept = None


def _grade_rate_read(*, sample: int) -> GradeRate:
    # Latest by id rather than by finished_at: the primary key index walks back to the first
    # rows with both timestamps, where sorting on finished_at would scan the whole table.
    rows = list(
        Submission.objects.filter(
            status__in=Submission.FINAL_STATUSES,
            started_at__isnull=False,
            finished_at__isnull=False,
        )
        .order_by("-pk")
        .values_list("started_at", "finished_at", "worker")[:sample]
    )
    durations = [
        (finished - started).total_seconds() for started, finished, _ in rows if finished >= started
    ]
    now = timezone.now()
    since = now - QUEUE_WORKERS_WINDOW
    workers = {worker for _, finished, worker in rows if worker and finished >= since}
    running = tuple(
        Submission.objects.filter(status=Submission.Status.RUNNING, started_at__gte=since)
        .order_by("started_at")
        .values_list("started_at", flat=True)[:sample]
    )
    rate = GradeRate(
        median_seconds=statistics.median(durations) if durations else None,
        workers=max(len(workers), 1),
        running_since=running,
        finished_seconds=tuple(durations),
    )
    if running:
        rate = replace(rate, median_seconds=rate.median_at(now))
    return rate


def submission_queue_estimate_seconds(
    *, submission: Submission, ahead: int | None = None, rate: GradeRate | None = None
) -> float | None:
    """Seconds until a queued submission's grade starts: what is left of the grades running
    now plus those ahead of it times the median grade, shared by the busy workers; None once
    it runs or before any grade was measured."""
    if ahead is None:
        ahead = submission_queue_ahead(submission=submission)
    if ahead is None:
        return None
    rate = rate or grade_rate_recent()
    now = timezone.now()
    median = rate.median_at(now)
    if median is None:
        return None
    left_running = sum(
        max(median - (now - since).total_seconds(), 0.0) for since in rate.running_since
    )
    workers = len(rate.running_since) or rate.workers
    return round((left_running + ahead * median) / workers, 1)


def submission_queue_waited_seconds(*, submission: Submission) -> float | None:
    """Seconds since a queued submission was queued; None once it runs."""
    if submission.status != Submission.Status.QUEUED or submission.queued_at is None:
        return None
    return max((timezone.now() - submission.queued_at).total_seconds(), 0.0)


def duration_approximate(seconds: float) -> str:
    """'about 3 s', 'about 25 s', 'about 4 min': no more digits than an estimate deserves."""
    if seconds < 1:
        return MSG_QUEUE_UNDER_A_SECOND
    if seconds < 9.5:
        duration = f"{round(seconds)} s"
    elif seconds < 57.5:
        duration = f"{5 * round(seconds / 5)} s"
    elif seconds < 3570:
        duration = f"{round(seconds / 60)} min"
    else:
        duration = f"{round(seconds / 3600)} h"
    return MSG_QUEUE_ESTIMATE.format(duration=duration)


def duration_waited(seconds: float) -> str:
    """'12 s', '3 min 5 s': the time already waited, never rounded up."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def duration_at_least(seconds: float) -> str:
    """'15 s', '2 min': an estimate's duration rounded up (so never below what it bounds)."""
    if seconds < 9.5:
        return f"{max(math.ceil(seconds), 1)} s"
    if seconds < 57.5:
        return f"{5 * math.ceil(seconds / 5)} s"
    if seconds < 3570:
        return f"{math.ceil(seconds / 60)} min"
    return f"{math.ceil(seconds / 3600)} h"


def submission_queue_text(
    *, ahead: int | None, estimate_seconds: float | None, waited_seconds: float | None = None
) -> str:
    """'3 ahead of you, about 2 s', 'next to be graded' ...; '' once it is not queued.

    With the time already waited: '3 ahead of you; waited 12 s, about 20 s in all', where the
    whole is the time waited plus the estimate (never less than what was waited), or 'a few
    seconds more' once the measured rates say the wait should be over.
    """
    if ahead is None:
        return ""
    text = MSG_QUEUE_NEXT if ahead == 0 else MSG_QUEUE_AHEAD.format(ahead=ahead)
    if ahead == 0 or estimate_seconds is None:
        return text
    if waited_seconds is None:
        return text + ", " + duration_approximate(estimate_seconds)
    waited = duration_waited(waited_seconds)
    if estimate_seconds < QUEUE_FEW_SECONDS:
        return text + "; " + MSG_QUEUE_PASSED.format(waited=waited)
    total = duration_at_least(waited_seconds + estimate_seconds)
    return text + "; " + MSG_QUEUE_WAITED.format(waited=waited, total=total)


def submission_best_of_user(*, user: AbstractBaseUser, exercise: Exercise) -> Submission | None:
    """The student's best graded submission of an exercise: the highest score, and of equal
    scores the first that reached it. None for anonymous users or before any verdict."""
    if not user.is_authenticated:
        return None
    return (
        Submission.objects.filter(
            user=user,
            exercise=exercise,
            status__in=(Submission.Status.PASSED, Submission.Status.FAILED),
            score__isnull=False,
        )
        .order_by("-score", "finished_at", "pk")
        .first()
    )


def submission_get_for_user(*, user: AbstractBaseUser, submission_id: int) -> Submission | None:
    """A student sees only their own submissions, of published exercises; staff who may view
    submissions see all."""
    qs = Submission.objects.select_related("exercise", "user")
    if not (user.is_staff and user.has_perm("grader.view_submission")):
        qs = qs.filter(exercise_published_q(via="exercise__"), user=user)
    return qs.filter(pk=submission_id).first()


def submission_checks_visible(
    *, submission: Submission, viewer: AbstractBaseUser
) -> list[dict[str, Any]]:
    """Each check's pass/fail, with its message only where its visibility allows.

    The visibility is the exercise's current one, not the one stored with the verdict: hiding
    a check hides its message (and its expected values) on every earlier submission too.
    """
    if not submission.checks:  # queued, running, or an error before any check: no query
        return []
    shown = []
    deadline_passed = submission.exercise.deadline_passed
    staff_reader = viewer.is_staff and viewer.has_perm("grader.view_submission")
    current = _current_visibility(submission.exercise)
    for stored in submission.checks:
        check = {**stored, "visibility": _visibility_now(stored, current)}
        if staff_reader:  # instructors see every message, whatever the students see
            message: str | None = str(check.get("message", ""))
        else:
            message = visible_message(check=check, deadline_passed=deadline_passed)
        if message is None:
            hidden = check.get("visibility") == ExerciseCheck.Visibility.HIDDEN
            message = MSG_CHECK_HIDDEN if hidden else MSG_CHECK_AFTER_DEADLINE
        shown.append(
            {
                "name": check.get("name", ""),
                "label": as_math(check.get("label") or check.get("name", "")),
                "passed": bool(check.get("passed")),
                "weight": check.get("weight", 1.0),
                "message": as_math(message),
            }
        )
    return shown


_STRICTNESS = {
    ExerciseCheck.Visibility.SHOWN: 0,
    ExerciseCheck.Visibility.AFTER_DEADLINE: 1,
    ExerciseCheck.Visibility.HIDDEN: 2,
}


def _current_visibility(exercise: Exercise) -> dict[str, list[tuple[str, str]]]:
    """name -> [(label, visibility)] of the exercise's checks as they are now."""
    current: dict[str, list[tuple[str, str]]] = {}
    for name, label, visibility in exercise.checks.values_list("name", "label", "visibility"):
        current.setdefault(name, []).append((label, visibility))
    return current


def _visibility_now(stored: dict[str, Any], current: dict[str, list[tuple[str, str]]]) -> str:
    same_name = current.get(stored.get("name", ""), [])
    if not same_name:  # the check was removed since: what was stored with the verdict
        return str(stored.get("visibility", ExerciseCheck.Visibility.SHOWN))
    same_label = [v for label, v in same_name if label == stored.get("label")]
    # One check by that name (or label): its visibility. Several: the strictest of them.
    candidates = same_label or [v for _, v in same_name]
    return max(candidates, key=lambda v: _STRICTNESS.get(v, 2))


def submission_diagnosis(*, submission: Submission) -> list[dict[str, Any]]:
    """Misconception codes with their explanation, links and the rebuttal's text itself."""
    return misconceptions_described(codes=list(submission.diagnosis or []))


def submission_diagnosis_labels(*, submission: Submission) -> list[str]:
    """The names of the submission's misconceptions, in the order of its codes."""
    return [misconception_describe(code)["label"] for code in submission.diagnosis or []]


def submission_diff(*, older: Submission, newer: Submission) -> list[tuple[str, str]]:
    """A unified diff as (kind, line) pairs; kind is add, del, hunk, file or ''."""
    lines = difflib.unified_diff(
        older.code.splitlines(),
        newer.code.splitlines(),
        fromfile=f"#{older.pk}",
        tofile=f"#{newer.pk}",
        lineterm="",
    )
    return [(_diff_kind(line), line) for line in lines]


def _diff_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")


def regrade_preview_latest(*, exercise: Exercise) -> RegradePreview | None:
    return RegradePreview.objects.filter(exercise=exercise).first()


# ----------------------------------------------------------------------------------------------
# The student's error, structured for the page (exception first, their frames, the line).
#
# The sandbox sends only the student's frames (zygote.student_traceback keeps submission.py
# alone) and the stored verdict keeps them in the texts our own templates wrote: the syntax
# error's line, the load-time traceback, and each check's readable error (exception line
# first, then "at line N"). Reading them back here, in trusted code, needs no new field, no
# change to what crosses the sandbox, and works for every submission ever stored.

ERROR_MAX_FRAMES = 20
ERROR_MAX_CHARS = 500
SYNTAX_ERROR_TYPE = "SyntaxError"
MSG_ERROR_ON_LOAD = "Your code raised an exception while being loaded."
MSG_ERROR_ON_CALL = "On {what}, your function raised an error."
MSG_ERROR_SYNTAX = "Your code could not be compiled."
MSG_ERROR_LINE = "  at line {line}: {code}"


def _template_regex(template: str, **groups: str) -> re.Pattern[str]:
    """A regex of one of our message templates, each {field} a named group."""
    pattern = re.escape(template)
    for name, group in groups.items():
        pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>{group})")
    return re.compile(pattern)


_SYNTAX = _template_regex(sandbox_messages.MSG_SYNTAX_ERROR, line=r"\d+", msg=r".*")
_LOAD_PREFIX = sandbox_messages.MSG_IMPORT_ERROR.split("{traceback}")[0]
_CALL = _template_regex(check_messages.CALL_ERROR, what=r"[^\n]*?", error=r"(?s:.+)")
_FRAME_AT = _template_regex(
    check_messages.TRACEBACK_AT.removesuffix(": {code}"), line=r"\d+", func=r"[^:\n]+"
)
_FRAME_FROM = _template_regex(
    check_messages.TRACEBACK_CALLED_FROM.removesuffix(": {code}"), line=r"\d+", func=r"[^:\n]+"
)
_EXCEPTION_TYPE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$", re.S)


@dataclass(frozen=True)
class ErrorFrame:
    line: int
    function: str
    code: str


@dataclass(frozen=True)
class StudentError:
    """What the student's code raised: the exception first, then where, innermost first."""

    heading: str  # when it happened (compiling, loading, on which input)
    type: str
    message: str
    line: int | None  # of the innermost frame in the student's code (for the editor)
    frames: tuple[ErrorFrame, ...] = field(default=())
    # Read from the verdict's summary (compile or load time), which the page then replaces.
    from_message: bool = False

    @property
    def exception(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type

    @property
    def text(self) -> str:
        """The monospace block: the exception line, then the student's frames."""
        lines = [self.exception]
        for k, f in enumerate(self.frames):
            if not f.function:  # a syntax error: a line, in no function yet
                lines.append(MSG_ERROR_LINE.format(line=f.line, code=f.code).rstrip(": "))
                continue
            template = (
                check_messages.TRACEBACK_AT if k == 0 else check_messages.TRACEBACK_CALLED_FROM
            )
            lines.append(template.format(line=f.line, func=f.function, code=f.code).rstrip(": "))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "line": self.line,
            "frames": [
                {"line": f.line, "function": f.function, "code": f.code} for f in self.frames
            ],
        }


def _clip(text: str, limit: int = ERROR_MAX_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line_in(code: str, line: int | None) -> int | None:
    """The line if it is one of the submission's (a message can only claim one)."""
    if line is None:
        return None
    return line if 1 <= line <= max(len(code.splitlines()), 1) else None


def _parse_readable(heading: str, readable: str, code: str) -> StudentError | None:
    """An error as checks.base.readable_error writes it: exception lines, then frames."""
    lines = readable.strip("\n").splitlines()
    frames: list[ErrorFrame] = []
    # Frames are the trailing lines: "at line" (innermost), then "called from line"...
    while lines:
        last = lines[-1]
        match = _FRAME_FROM.match(last) or _FRAME_AT.match(last)
        if match is None:
            break
        rest = last[match.end() :]
        frames.insert(
            0,
            ErrorFrame(
                line=int(match["line"]),
                function=_clip(match["func"], 100),
                code=_clip(rest[2:] if rest.startswith(": ") else rest, 200),
            ),
        )
        lines.pop()
        if _FRAME_AT.match(last):
            break
    exception = "\n".join(lines).strip()
    if not exception:
        return None
    parsed = _EXCEPTION_TYPE.match(exception)
    if parsed is None or " " in parsed["type"]:
        type_, message = "Error", exception
    else:
        type_, message = parsed["type"], parsed["message"] or ""
    frames = frames[:ERROR_MAX_FRAMES]
    return StudentError(
        heading=heading,
        type=_clip(type_, 100),
        message=_clip(message),
        line=_line_in(code, frames[0].line) if frames else None,
        frames=tuple(frames),
    )


def submission_error(
    *, submission: Submission, checks: list[dict[str, Any]] | None = None
) -> StudentError | None:
    """The error the student's code raised, if it raised one, from the stored verdict.

    ``checks`` are the checks as this viewer may see them (``submission_checks_visible``): a
    hidden check's traceback is not read, so the error says no more than the page may.
    """
    if not submission.is_final:
        return None
    message = submission.message or ""
    syntax = _SYNTAX.search(message)
    if syntax is not None:
        line = _line_in(submission.code, int(syntax["line"]))
        source = submission.code.splitlines()[line - 1] if line else ""
        return StudentError(
            heading=MSG_ERROR_SYNTAX,
            type=SYNTAX_ERROR_TYPE,
            message=_clip(syntax["msg"]),
            line=line,
            frames=(ErrorFrame(line, "", _clip(source, 200)),) if line else (),
            from_message=True,
        )
    if _LOAD_PREFIX in message:
        traceback = message.split(_LOAD_PREFIX, 1)[1]
        error = _parse_readable(MSG_ERROR_ON_LOAD, readable_error(traceback), submission.code)
        return replace(error, from_message=True) if error is not None else None
    for check in checks or []:
        if check.get("passed"):
            continue
        call = _CALL.search(str(check.get("message", "")))
        if call is not None:
            heading = MSG_ERROR_ON_CALL.format(what=call["what"])
            error = _parse_readable(heading, call["error"], submission.code)
            if error is not None:
                return error
    return None


# --- Why a row of the history failed to be evaluated ------------------------------------------

HISTORY_REASON_MAX_CHARS = 160
_STOPPED_PREFIX = MSG_STOPPED.split("{reason}")[0]


@dataclass(frozen=True)
class HistoryRow:
    submission: Submission
    reason: str  # plain text, "" where the status and misconceptions say it all


def submission_history_reason(*, submission: Submission) -> str:
    """One line on why a submission could not be evaluated, or stopped early: the exception
    (type, message, line) or the limit it hit, from the stored verdict. Plain text (student's
    text included): the page escapes it and never typesets it."""
    message = submission.message or ""
    if submission.status == Submission.Status.FAILED and message.startswith(_STOPPED_PREFIX):
        return _one_line(message[len(_STOPPED_PREFIX) :])
    if submission.status not in (Submission.Status.ERROR, Submission.Status.INTERNAL_ERROR):
        return ""
    error = submission_error(submission=submission)
    if error is not None:
        where = f" (line {error.line})" if error.line else ""
        return _one_line(error.exception) + where
    return _one_line(message)


def submission_history_rows(*, submissions: Iterable[Submission]) -> list[HistoryRow]:
    return [HistoryRow(s, submission_history_reason(submission=s)) for s in submissions]


def _one_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > HISTORY_REASON_MAX_CHARS:
        return first[: HISTORY_REASON_MAX_CHARS - 1].rstrip() + "…"
    return first
