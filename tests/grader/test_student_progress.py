"""A student's progress, the queue estimate, readable errors and misconception names
(selectors and views against the database; the live flow is in tests/e2e)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from grader.engine.grading import grade
from grader.models import Exercise, Submission
from grader.selectors import exercises as exercise_selectors
from grader.selectors import submissions as selectors
from questions.models import Attempt, Question
from tests.factories import exercise_get, submission_create, user_create
from tests.grader.helpers import builtin_spec

pytestmark = pytest.mark.django_db
SLUG = "scaled-dot-product-attention"

RAISING_CODE = """import numpy as np


def helper(x):
    raise ValueError("boom at helper")


def attention(Q, K, V, mask=None):
    return helper(Q)
"""
# What the real sandbox and checks stored for RAISING_CODE, for a module raising at load and
# for a syntax error (captured with `manage.py grade ... --json`).
CALL_ERROR_MESSAGE = (
    "On the worked example (3 tokens, d_k = 4), your function raised an error:\n"
    "ValueError: boom at helper\n"
    '  at line 5, in helper: raise ValueError("boom at helper")\n'
    "  called from line 9, in attention: return helper(Q)"
)
LOAD_CODE = "import numpy as np\nx = 1 / 0\ndef attention(Q, K, V, mask=None):\n    return Q\n"
LOAD_MESSAGE = (
    "Your code raised an exception while being loaded:\n"
    "Traceback (most recent call last):\n"
    '  File "submission.py", line 2, in <module>\n'
    "    x = 1 / 0\n"
    "        ~~^~~\n"
    "ZeroDivisionError: division by zero\n"
)
SYNTAX_CODE = "def attention(Q, K, V, mask=None):\n    return Q +\n"
SYNTAX_MESSAGE = "Syntax error on line 2: invalid syntax"


def user(username: str, *, staff: bool = False):
    return user_create(username=username, password="pw-123-abc", instructor=staff)


def client_for(u) -> Client:
    c = Client()
    c.force_login(u)
    return c


def make(u, slug: str = SLUG, **fields: object) -> Submission:
    fields.setdefault("status", "queued")
    return submission_create(
        user=u,
        exercise=exercise_get(slug=slug),
        seed=7,
        code=fields.pop("code", "def attention(Q, K, V, mask=None):\n    return Q\n"),
        **fields,
    )


def finished(u, seconds: float, *, worker: str = "w1", **fields: object) -> Submission:
    now = timezone.now()
    fields.setdefault("status", "passed")
    fields.setdefault("score", 1.0)
    return make(
        u,
        started_at=now - timedelta(seconds=seconds),
        finished_at=now,
        worker=worker,
        **fields,
    )


def check(
    message: str, *, passed: bool = False, visibility: str = "shown", name: str = "worked-example"
) -> dict[str, object]:
    return {
        "name": name,
        "label": "Worked example",
        "passed": passed,
        "message": message,
        "weight": 1.0,
        "visibility": visibility,
    }


# -- progress ----------------------------------------------------------------------------------


def test_exercise_progress_is_one_query_for_the_whole_list() -> None:
    ann, bob = user("ann"), user("bob")
    make(ann, status="failed", score=0.25)
    make(ann, status="passed", score=1.0)
    make(ann, "multi-head-attention", status="failed", score=0.5)
    make(ann, "multi-head-attention", status="internal-error")
    make(bob, "stable-softmax", status="passed", score=1.0)  # someone else's
    with CaptureQueriesContext(connection) as queries:
        rows = {e.slug: e for e in exercise_selectors.exercise_list_with_progress(user=ann)}
    assert len(queries) == 1
    attention, mha, softmax = (
        rows[SLUG],
        rows["multi-head-attention"],
        rows["stable-softmax"],
    )
    assert (attention.n_submissions, attention.n_passed, attention.best_score) == (2, 1, 1.0)
    assert (mha.n_submissions, mha.n_passed, mha.best_score) == (2, 0, 0.5)
    assert (softmax.n_submissions, softmax.best_score) == (0, None)
    progress = [exercise_selectors.exercise_progress(exercise=e) for e in (attention, mha, softmax)]
    assert progress == ["solved", "attempted", "not-started"]


def test_exercise_list_shows_progress_in_words_and_nothing_to_anonymous_visitors() -> None:
    ann = user("ann")
    make(ann, status="failed", score=0.25)
    make(ann, status="failed", score=0.5)
    html = client_for(ann).get("/exercises/").content.decode()
    assert 'data-progress="attempted"' in html and ">Attempted</span>" in html
    assert "best score 0.50 · 2 submissions" in html
    # Every published exercise but the one ann attempted.
    published = Exercise.objects.filter(is_published=True).count()
    assert html.count(">Not started</span>") == published - 1
    anon = Client().get("/exercises/").content.decode()
    assert "data-progress" not in anon and "Not started" not in anon


def test_exercise_page_links_the_best_result() -> None:
    ann = user("ann")
    make(ann, status="failed", score=0.5, finished_at=timezone.now())
    best = make(ann, status="failed", score=0.75, finished_at=timezone.now())
    make(ann, status="failed", score=0.75, finished_at=timezone.now())  # equal, later
    make(ann, status="error", score=0.0)
    assert selectors.submission_best_of_user(user=ann, exercise=best.exercise) == best
    html = client_for(ann).get(f"/exercises/{SLUG}/").content.decode()
    assert "Your best result:</strong> score 0.75" in html
    assert f'href="/submissions/{best.pk}/">submission #{best.pk}</a>' in html
    assert "Your best result" not in Client().get(f"/exercises/{SLUG}/").content.decode()


def test_question_list_marks_what_the_candidate_answered_in_one_query() -> None:
    ann = user("ann")
    question = Question.objects.published().get(slug="why-divide-before-softmax")
    Attempt.objects.create(user=ann, question=question, text="because variance")
    Attempt.objects.create(user=ann, question=question, text="again")
    from questions.selectors import Owner, question_list_progress

    with CaptureQueriesContext(connection) as queries:
        progress = question_list_progress(Owner(user=ann))
    assert len(queries) == 1
    assert progress[question.pk].answers == 2 and progress[question.pk].answered
    html = client_for(ann).get("/questions/").content.decode()
    assert 'data-answered="yes"' in html and "2 answers" in html
    assert 'data-answered="no"' in html and "Not answered yet" in html


def test_an_anonymous_candidates_answers_are_known_by_their_session() -> None:
    c = Client()
    question = Question.objects.published().get(slug="why-divide-before-softmax")
    response = c.post(
        f"/questions/{question.slug}/answer/",
        {"text": "The dot products' variance grows with d_k, so the softmax saturates."},
    )
    assert response.status_code == 302
    html = c.get("/questions/").content.decode()
    assert 'data-answered="yes"' in html and "1 answer" in html
    assert 'data-answered="yes"' not in Client().get("/questions/").content.decode()


# -- queue position and estimate ---------------------------------------------------------------


def test_the_estimate_is_the_median_grade_times_those_ahead_per_worker() -> None:
    ann, bob = user("ann"), user("bob")
    for seconds in (1.0, 2.0, 9.0):
        finished(ann, seconds, worker="w1")
    now = timezone.now()
    for k in range(3):
        make(ann, queued_at=now - timedelta(seconds=10 - k))
    mine = make(bob, queued_at=now)
    assert selectors.submission_queue_ahead(submission=mine) == 3
    assert selectors.submission_queue_estimate_seconds(submission=mine) == 6.0
    finished(ann, 2.0, worker="w2")  # a second worker finished one lately
    # The rate is kept for GRADE_RATE_TTL_SECONDS per process (no query per submit or poll)...
    assert selectors.grade_rate_recent() == selectors.GradeRate(median_seconds=2.0, workers=1)
    selectors.grade_rate_forget()  # ...then read again
    assert selectors.grade_rate_recent() == selectors.GradeRate(median_seconds=2.0, workers=2)
    assert selectors.submission_queue_estimate_seconds(submission=mine) == 3.0


def test_no_estimate_before_any_grade_was_measured_or_once_running() -> None:
    ann = user("ann")
    make(ann, queued_at=timezone.now() - timedelta(seconds=5))
    mine = make(ann, queued_at=timezone.now())
    assert selectors.submission_queue_estimate_seconds(submission=mine) is None
    assert selectors.submission_queue_text(ahead=1, estimate_seconds=None) == "1 ahead of you"
    running = make(ann, status="running")
    assert selectors.submission_queue_estimate_seconds(submission=running) is None


def test_a_grade_running_longer_than_usual_raises_the_estimate_and_busy_workers_share_it() -> None:
    ann, bob = user("ann"), user("bob")
    for _ in range(2):
        finished(ann, 1.0, worker="w1")
    now = timezone.now()
    make(ann, status="running", started_at=now - timedelta(seconds=14), worker="w1")
    for k in range(2):
        make(ann, queued_at=now - timedelta(seconds=12 - k))
    mine = make(bob, queued_at=now - timedelta(seconds=10))
    selectors.grade_rate_forget()
    # The median of 1, 1 and the running 14 s is 1 s; the running one's time is past it.
    assert selectors.submission_queue_estimate_seconds(submission=mine) == 2.0
    make(ann, status="running", started_at=now - timedelta(seconds=20), worker="w2")
    make(ann, status="running", started_at=now - timedelta(seconds=30), worker="w3")
    selectors.grade_rate_forget()
    # Now the median is 14 s (1, 1, 14, 20, 30) and three workers are busy: nothing left of
    # the running ones by the median, two ahead of 14 s each, shared by three.
    assert selectors.submission_queue_estimate_seconds(submission=mine) == pytest.approx(9.3, 0.1)
    # A running row older than the window is a dead worker's: not busy, not measured.
    make(ann, status="running", started_at=now - timedelta(hours=1), worker="w4")
    selectors.grade_rate_forget()
    assert len(selectors.grade_rate_recent().running_since) == 3


@pytest.mark.parametrize(
    ("ahead", "estimate", "waited", "text"),
    [
        (2, 0.5, 14.2, "2 ahead of you; waited 14 s, a few seconds more"),
        (2, 9.3, 10.0, "2 ahead of you; waited 10 s, about 20 s in all"),
        (1, 4.0, 12.4, "1 ahead of you; waited 12 s, about 20 s in all"),
        (3, 30.0, 100.0, "3 ahead of you; waited 1 min 40 s, about 3 min in all"),
        (0, 5.0, 10.0, "next to be graded"),
    ],
)
def test_the_queue_text_never_shows_a_whole_below_the_time_waited(
    ahead: int, estimate: float, waited: float, text: str
) -> None:
    shown = selectors.submission_queue_text(
        ahead=ahead, estimate_seconds=estimate, waited_seconds=waited
    )
    assert shown == text


@pytest.mark.parametrize("waited", [0.0, 0.9, 9.4, 9.6, 12.0, 57.4, 59.9, 61.0, 3569.0, 3600.0])
@pytest.mark.parametrize("estimate", [1.0, 3.1, 7.0, 44.0])
def test_the_whole_shown_is_at_least_the_waited_shown(waited: float, estimate: float) -> None:
    def seconds(text: str) -> int:
        units = {"s": 1, "min": 60, "h": 3600}
        parts = text.split()
        return sum(int(n) * units[u] for n, u in zip(parts[::2], parts[1::2], strict=True))

    shown = selectors.submission_queue_text(
        ahead=1, estimate_seconds=estimate, waited_seconds=waited
    )
    waited_text = shown.split("waited ")[1].split(",")[0]
    total_text = shown.split("about ")[1].removesuffix(" in all")
    assert seconds(total_text) >= seconds(waited_text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.4, "less than a second"),
        (1.4, "about 1 s"),
        (2.6, "about 3 s"),
        (12.0, "about 10 s"),
        (27.4, "about 25 s"),
        (59.0, "about 1 min"),
        (150.0, "about 2 min"),
        (7200.0, "about 2 h"),
    ],
)
def test_durations_are_rounded_to_what_an_estimate_deserves(seconds: float, text: str) -> None:
    assert selectors.duration_approximate(seconds) == text


def test_the_result_fragment_and_the_api_show_the_position_and_estimate() -> None:
    ann, bob = user("ann"), user("bob")
    finished(ann, 0.7)
    now = timezone.now()
    for k in range(3):
        make(ann, queued_at=now - timedelta(seconds=10 - k))
    mine = make(bob, queued_at=now)
    bob_client = client_for(bob)
    html = bob_client.get(f"/submissions/{mine.pk}/status/").content.decode()
    # Queued just now: about 2.1 s to wait in all, rounded up.
    expected = selectors.MSG_QUEUE_AHEAD.format(ahead=3) + "; waited 0 s, about 3 s in all"
    assert expected in html and 'data-queue-position="4"' in html
    body = bob_client.get(f"/api/submissions/{mine.pk}/").json()
    assert body["queue_position"] == 4 and body["queue_estimate_seconds"] == 2.1
    first = Submission.objects.filter(status="queued").order_by("queued_at").first()
    ann_html = client_for(ann).get(f"/submissions/{first.pk}/status/").content.decode()
    assert selectors.MSG_QUEUE_NEXT in ann_html and "about" not in ann_html


# -- readable errors ---------------------------------------------------------------------------


def test_a_runtime_error_is_read_from_the_visible_check_with_the_students_line() -> None:
    ann = user("ann")
    s = make(
        ann,
        status="failed",
        score=0.0,
        code=RAISING_CODE,
        message="1 of 1 checks failed.",
        checks=[check(CALL_ERROR_MESSAGE)],
    )
    checks = selectors.submission_checks_visible(submission=s, viewer=ann)
    error = selectors.submission_error(submission=s, checks=checks)
    assert error is not None
    assert (error.type, error.message, error.line) == ("ValueError", "boom at helper", 5)
    assert [(f.line, f.function) for f in error.frames] == [(5, "helper"), (9, "attention")]
    assert error.text.splitlines()[0] == "ValueError: boom at helper"
    assert error.as_dict()["frames"][1] == {
        "line": 9,
        "function": "attention",
        "code": "return helper(Q)",
    }
    c = client_for(ann)
    html = c.get(f"/submissions/{s.pk}/").content.decode()
    assert 'data-error-line="5"' in html and 'data-error-type="ValueError"' in html
    assert c.get(f"/api/submissions/{s.pk}/").json()["error"] == error.as_dict()
    assert '<pre class="traceback">ValueError: boom at helper\n  at line 5, in helper' in html


def test_a_hidden_checks_traceback_is_not_revealed() -> None:
    ann = user("ann")
    s = make(
        ann,
        status="failed",
        score=0.0,
        code=RAISING_CODE,
        # A check no longer in the exercise keeps the visibility stored with its verdict.
        checks=[check(CALL_ERROR_MESSAGE, visibility="hidden", name="removed-check")],
    )
    html = client_for(ann).get(f"/submissions/{s.pk}/").content.decode()
    assert "data-error-line" not in html and 'class="traceback"' not in html
    assert "ValueError: boom at helper" not in html
    staff = client_for(user("boss", staff=True)).get(f"/submissions/{s.pk}/").content.decode()
    assert 'data-error-line="5"' in staff


def test_an_error_at_load_time_shows_the_exception_first() -> None:
    ann = user("ann")
    s = make(ann, status="error", score=0.0, code=LOAD_CODE, message=LOAD_MESSAGE)
    error = selectors.submission_error(submission=s)
    assert error is not None and error.from_message
    assert (error.type, error.line) == ("ZeroDivisionError", 2)
    assert error.text == "ZeroDivisionError: division by zero\n  at line 2, in <module>: x = 1 / 0"
    html = client_for(ann).get(f"/submissions/{s.pk}/").content.decode()
    assert "Traceback (most recent call last)" not in html  # the raw form is replaced
    assert selectors.MSG_ERROR_ON_LOAD in html and 'data-error-line="2"' in html


def test_a_syntax_error_names_its_line() -> None:
    ann = user("ann")
    s = make(ann, status="error", score=0.0, code=SYNTAX_CODE, message=SYNTAX_MESSAGE)
    error = selectors.submission_error(submission=s)
    assert error is not None
    assert (error.type, error.message, error.line) == ("SyntaxError", "invalid syntax", 2)
    assert error.text == "SyntaxError: invalid syntax\n  at line 2: return Q +"


def test_a_claimed_line_outside_the_code_marks_nothing() -> None:
    ann = user("ann")
    s = make(ann, status="error", score=0.0, code="x = (\n", message="Syntax error on line 99: x")
    error = selectors.submission_error(submission=s)
    assert error is not None and error.line is None and error.frames == ()


def test_no_error_for_a_plain_failure_or_a_queued_submission() -> None:
    ann = user("ann")
    failed = make(ann, status="failed", score=0.0, checks=[check("The scores are not scaled.")])
    assert selectors.submission_error(submission=failed, checks=failed.checks) is None
    queued = make(ann, message=SYNTAX_MESSAGE)
    assert selectors.submission_error(submission=queued) is None


# -- names, never slugs ------------------------------------------------------------------------


def test_misconceptions_are_named_and_the_api_adds_their_labels() -> None:
    ann = user("ann")
    s = make(ann, status="failed", score=0.5, diagnosis=["missing-scale", "no-such-code"])
    c = client_for(ann)
    for url in (f"/submissions/{s.pk}/", f"/exercises/{SLUG}/history/"):
        html = c.get(url).content.decode()
        assert "The scores are not divided by √d_k" in html
        assert ">missing-scale<" not in html and ">no-such-code<" not in html
    body = c.get(f"/api/submissions/{s.pk}/").json()
    assert [d["code"] for d in body["diagnosis"]] == ["missing-scale", "no-such-code"]
    labels = ["The scores are not divided by √d_k", "Unknown misconception"]
    assert body["diagnosis_labels"] == labels
    staff = client_for(user("boss", staff=True))
    html = staff.get("/staff/submissions/").content.decode()
    assert ">missing-scale<" not in html and "The scores are not divided by √d_k" in html


# -- the same, from verdicts the real sandbox computed -----------------------------------------

CHAINED_CODE = """import numpy as np


def attention(Q, K, V, mask=None):
    try:
        return Q @ K  # shapes (n, d) @ (m, d): numpy raises here
    except ValueError as e:
        raise RuntimeError("could not multiply") from e
"""


@pytest.mark.parametrize(
    ("code", "status", "type_", "line"),
    [
        (RAISING_CODE, "failed", "ValueError", 5),
        (LOAD_CODE, "error", "ZeroDivisionError", 2),
        (SYNTAX_CODE, "error", "SyntaxError", 2),
        (CHAINED_CODE, "failed", "RuntimeError", 8),
    ],
)
def test_errors_graded_through_the_sandbox_name_the_students_line(
    sandbox: object, code: str, status: str, type_: str, line: int
) -> None:
    verdict = grade(spec=builtin_spec("attention"), code=code, seed=3, executor=sandbox).to_dict()
    assert verdict["status"] == status
    s = make(
        user("ann"),
        code=code,
        **{k: verdict[k] for k in ("status", "score", "checks", "diagnosis", "message")},
    )
    checks = selectors.submission_checks_visible(submission=s, viewer=s.user)
    error = selectors.submission_error(submission=s, checks=checks)
    assert error is not None
    assert (error.type, error.line) == (type_, line)
    assert error.text.splitlines()[0].startswith(type_)
    assert "zygote" not in error.text and "File " not in error.text


def test_the_position_counts_in_the_brokers_order_priority_then_arrival() -> None:
    # Fair share published the heavy user's earlier submissions at a higher number (served
    # later): they are not ahead of a lighter student's, though queued before it.
    heavy, light, other = user("heavy"), user("light"), user("other")
    now = timezone.now()
    for k in range(3):
        make(heavy, queued_at=now - timedelta(seconds=10 - k), priority=4)
    make(other, queued_at=now - timedelta(seconds=1), priority=0)
    mine = make(light, queued_at=now, priority=0)
    assert selectors.submission_queue_position(submission=mine) == 2  # only `other` is ahead
    later_heavy = make(heavy, queued_at=now + timedelta(seconds=1), priority=4)
    assert selectors.submission_queue_position(submission=later_heavy) == 6
