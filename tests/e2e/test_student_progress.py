"""In the browser: progress marks, the queue position with its estimate, and a
readable traceback whose line the editor marks. A real Redis and a real Celery worker grade."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import Page, expect

from grader.models import Exercise, Submission
from grader.selectors.submissions import MSG_QUEUE_NEXT, grade_rate_forget
from grader.services.submitting import submission_create
from tests import factories
from tests.e2e.flows import ATTENTION_EXERCISE, VERDICT_TIMEOUT_MS, submit_code
from tests.factories import student_create
from tests.pipeline.stack import Redis, Worker, golden

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.stack,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CORRECT = golden("correct_matmul")
# Raises on line 5, called from line 9: the student's frames only, innermost first.
RAISING = """import numpy as np


def helper(x):
    raise ValueError("boom at helper")


def attention(Q, K, V, mask=None):
    return helper(Q)
"""
SYNTAX_ERROR = "import numpy as np\n\ndef attention(Q, K, V, mask=None):\n    return Q +\n"


class _Stack:
    """Redis for the whole module; the worker started only when a test needs it, so a test
    can submit while no worker runs and see its place in the queue."""

    def __init__(self, name: str) -> None:
        self.redis = Redis()
        self.worker = Worker(name)

    def worker_running(self) -> None:
        if self.worker.proc is None or self.worker.proc.poll() is not None:
            self.worker.start()

    def worker_stopped(self) -> None:
        self.worker.stop()


@pytest.fixture(scope="module")
def stack() -> Iterator[_Stack]:
    s = _Stack("e2e-student-progress")
    s.redis.start()
    try:
        yield s
    finally:
        s.worker.stop()
        s.redis.stop()


@pytest.fixture
def student(stack: _Stack, logged_in_page: Callable[..., Page]) -> Page:
    user = student_create(username="progress-e2e", password="student-pass-123")
    return logged_in_page(user, "student-pass-123")


def _fits_a_phone(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("() => document.documentElement.scrollWidth")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert width <= 390, f"{page.url} scrolls sideways at 390 px ({width} px wide)"


def _verdict(page: Page, status: str) -> None:
    expect(page.locator("#result .verdict")).to_have_attribute(
        "data-status", status, timeout=VERDICT_TIMEOUT_MS
    )


_UNITS = {"s": 1, "min": 60, "h": 3600}
_SHOWN_WAIT = re.compile(
    r"waited (?P<waited>[^,]+), (?:about (?P<total>.+) in all|a few seconds more)"
)


def _seconds(text: str) -> int:
    parts = text.split()
    return sum(int(n) * _UNITS[u] for n, u in zip(parts[::2], parts[1::2], strict=True))


def _shown_wait(text: str) -> tuple[int, int | None]:
    """(seconds waited, seconds of the whole wait or None for 'a few seconds more'), as the
    page shows them."""
    match = _SHOWN_WAIT.search(text)
    assert match is not None, f"no time waited and estimate in {text!r}"
    total = match["total"]
    return _seconds(match["waited"]), None if total is None else _seconds(total)


def _queue_text(page: Page) -> str | None:
    """The queue line of the result panel now, or None once the submission left the queue."""
    return page.evaluate(
        """() => {
            const v = document.querySelector("#result .verdict");
            if (!v || v.dataset.status !== "queued") return null;
            const q = v.querySelector(".queue-position");
            return q ? q.textContent : "";
        }"""
    )


def test_a_queued_submission_shows_its_place_and_an_estimate_until_a_worker_grades_it(
    stack: _Stack, student: Page, screenshot: Callable[..., object]
) -> None:
    stack.worker_stopped()  # deterministic: nothing is graded until the worker starts below
    other = student_create(username="ahead-e2e", password="other-pass-123")
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    # Three measured grades of 2 s by one worker: two ahead of us make about 4 s.
    now = timezone.now()
    for k in range(3):
        factories.submission_create(
            user=other,
            exercise=exercise,
            code=CORRECT,
            seed=k,
            status=Submission.Status.PASSED,
            score=1.0,
            started_at=now - timedelta(seconds=60 + k),
            finished_at=now - timedelta(seconds=58 + k),
            worker="earlier-worker",
        )
    # Two other students queued before us, one submission each and no recent grades of their
    # own: the broker serves them first (fair share would put a second one of theirs after us).
    for name in ("ahead-1-e2e", "ahead-2-e2e"):
        ahead = student_create(username=name, password="other-pass-123")
        submission_create(user=ahead, exercise=exercise, code=CORRECT)

    submit_code(student, CORRECT)
    verdict = student.locator("#result .verdict")
    expect(verdict).to_have_attribute("data-status", "queued")
    position = verdict.locator(".queue-position")
    expect(position).to_contain_text("2 ahead of you; waited ")
    first = position.text_content() or ""
    waited, total = _shown_wait(first)
    assert total is not None and total >= max(waited, 4), first
    # Polls later, still there (updated, not lost), and never below the time waited.
    expect(student.locator("#result .verdict .queue-position")).not_to_have_text(first)
    screenshot(student, "queue-position-estimate")

    # A real queue: one worker grades the two ahead, then ours. At every look while ours
    # waits, the whole wait shown is at least the time the page says was waited.
    stack.worker_running()
    seen: list[str] = []
    text = _queue_text(student)
    looks = int(VERDICT_TIMEOUT_MS / 200)  # a look every 200 ms, for the verdict's bound
    while text is not None and looks:
        looks -= 1
        if text and text not in seen:
            seen.append(text)
            # "next to be graded" carries no figure: ours is the one a worker takes next.
            if text != MSG_QUEUE_NEXT:
                waited, total = _shown_wait(text)
                assert total is None or total >= waited, text
        student.wait_for_timeout(200)
        text = _queue_text(student)
    assert seen, "the queue line was never read"
    _verdict(student, "passed")
    expect(student.locator("#result .queue-position")).to_have_count(0)


def test_a_grade_running_past_the_estimate_says_a_few_seconds_more_never_less_than_waited(
    stack: _Stack, student: Page, screenshot: Callable[..., object]
) -> None:
    """The reported case: quick grades measured, then one grade that runs long while two wait
    before ours. The estimate never drops below the time waited and, once the measured rates
    say the wait should be over, it says so instead of a figure."""
    stack.worker_stopped()
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    other = student_create(username="busy-e2e", password="other-pass-123")
    now = timezone.now()

    def stored(seconds: float, *, status: str = Submission.Status.PASSED, **fields: object):
        return factories.submission_create(
            user=other,
            exercise=exercise,
            code=CORRECT,
            seed=7,
            status=status,
            score=1.0 if status == Submission.Status.PASSED else None,
            worker="busy-worker",
            **fields,
        )

    for k in range(3):  # quick grades, as measured before
        stored(
            0.2,
            started_at=now - timedelta(seconds=90 + k, milliseconds=200),
            finished_at=now - timedelta(seconds=90 + k),
        )
    stored(0, status=Submission.Status.RUNNING, started_at=now - timedelta(seconds=14))
    for k in range(2):
        stored(0, status=Submission.Status.QUEUED, queued_at=now - timedelta(seconds=20 - k))
    mine = factories.submission_create(
        user=get_user_model().objects.get(username="progress-e2e"),
        exercise=exercise,
        code=CORRECT,
        seed=1,
        status=Submission.Status.QUEUED,
        queued_at=now - timedelta(seconds=12),
    )
    grade_rate_forget()
    page = student
    page.goto(f"/submissions/{mine.pk}/")
    position = page.locator(".verdict .queue-position")
    expect(position).to_contain_text("2 ahead of you; waited ")
    expect(position).to_contain_text("a few seconds more")
    waited, total = _shown_wait(position.text_content() or "")
    assert waited >= 12 and total is None
    screenshot(page, "queue-estimate-passed")

    # Slower grades measured since: the estimate is a figure again, above the time waited.
    for k in range(5):
        stored(
            30,
            started_at=now - timedelta(seconds=60 + k),
            finished_at=now - timedelta(seconds=30 + k),
        )
    grade_rate_forget()
    expect(position).to_contain_text(" in all")
    text = position.text_content() or ""
    waited, total = _shown_wait(text)
    assert total is not None and total >= waited, text


def test_the_exercise_list_marks_progress_after_a_submission(
    stack: _Stack, student: Page, screenshot: Callable[..., object]
) -> None:
    stack.worker_running()
    student.goto("/exercises/")
    card = student.locator(".card", has_text="Scaled dot-product attention")
    expect(card.locator("[data-progress]")).to_have_attribute("data-progress", "not-started")
    expect(card).to_contain_text("Not started")

    submit_code(student, CORRECT)
    _verdict(student, "passed")
    student.goto("/exercises/")
    card = student.locator(".card", has_text="Scaled dot-product attention")
    expect(card.locator("[data-progress]")).to_have_attribute("data-progress", "solved")
    expect(card).to_contain_text("Solved")
    expect(card).to_contain_text("best score 1.00 · 1 submission")
    others = Exercise.objects.filter(is_published=True).count() - 1
    expect(student.locator('[data-progress="not-started"]')).to_have_count(others)
    screenshot(student, "exercise-list-progress")
    _fits_a_phone(student)

    student.goto(ATTENTION_EXERCISE)
    best = student.locator("#best-result")
    expect(best).to_contain_text("Your best result: score 1.00 (passed)")
    best.get_by_role("link").click()
    expect(student.get_by_role("heading", level=1)).to_contain_text("Submission #")


def test_a_runtime_error_shows_the_exception_first_and_the_editor_marks_its_line(
    stack: _Stack, student: Page, js_errors: list[str], screenshot: Callable[..., object]
) -> None:
    stack.worker_running()
    submit_code(student, RAISING)
    _verdict(student, "failed")
    error = student.locator("#result .student-error pre.traceback")
    expect(error).to_be_visible()
    text = error.inner_text()
    lines = text.splitlines()
    assert lines[0] == "ValueError: boom at helper"
    assert lines[1].startswith("  at line 5, in helper")
    assert lines[2].startswith("  called from line 9, in attention")
    assert "zygote" not in text and "sandbox" not in text and "File " not in text
    assert student.locator("#result .student-error pre.traceback").evaluate(
        "el => getComputedStyle(el).fontFamily"
    )  # a <pre>: monospace
    annotations = student.evaluate("() => window.codeEditor.session.getAnnotations()")
    assert annotations == [
        {"row": 4, "column": 0, "text": "ValueError: boom at helper", "type": "error"}
    ]
    expect(student.locator(".ace_gutter-cell.ace_error")).to_have_count(1)
    expect(student.locator(".ace_gutter-cell.ace_error")).to_have_text("5")
    screenshot(student, "runtime-error-annotation")
    assert js_errors == []
    student.locator("#result .verdict-head a").click()  # the submission's own page
    expect(student.locator(".student-error pre.traceback")).to_contain_text("at line 5")
    _fits_a_phone(student)


def test_a_syntax_error_marks_its_line_and_a_new_submission_clears_it(
    stack: _Stack, student: Page
) -> None:
    stack.worker_running()
    submit_code(student, SYNTAX_ERROR)
    _verdict(student, "error")
    expect(student.locator("#result .student-error pre.traceback")).to_contain_text(
        "SyntaxError: invalid syntax"
    )
    rows = student.evaluate(
        "() => window.codeEditor.session.getAnnotations().map(a => [a.row, a.type])"
    )
    assert rows == [[3, "error"]]
    student.evaluate("code => window.codeEditor.setValue(code, 1)", CORRECT)
    student.locator("#editor").click()
    student.keyboard.press("Control+Enter")
    _verdict(student, "passed")
    assert student.evaluate("() => window.codeEditor.session.getAnnotations().length") == 0
