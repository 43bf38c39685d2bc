"""Students' polish, server side: the unchanged starter code is refused on every path (nothing
stored, nothing counted), misconception texts are rendered, and history rows say why an error
or a timeout could not be evaluated."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from grader.engine.grading import MSG_STOPPED
from grader.engine.sandbox.messages import MSG_CPU_LIMIT, MSG_SYNTAX_ERROR
from grader.models import Exercise, Submission
from grader.selectors.exercises import exercise_statement_parts
from grader.selectors.misconceptions import misconceptions_described
from grader.services import submitting as services
from grader.services.submitting import MSG_CODE_UNCHANGED, is_starter_code

pytestmark = pytest.mark.django_db
SLUG = "scaled-dot-product-attention"


@pytest.fixture(autouse=True)
def _fresh_limits() -> None:
    cache.clear()  # rate limits and throttles count in the cache, which outlives a rollback


@pytest.fixture
def student():
    return get_user_model().objects.create_user("starter-student", password="pw-student-123")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call to the per-user submission limit (a refused submission must make none)."""
    calls: list[str] = []
    real = services.rate_limit_hit

    def spy(**kwargs: object) -> float | None:
        calls.append(str(kwargs.get("ident")))
        return real(**kwargs)

    monkeypatch.setattr(services, "rate_limit_hit", spy)
    return calls


def _reformatted(code: str) -> str:
    """The starter code as an editor or a paste may send it back: CRLF, trailing spaces,
    blank lines around it."""
    return "\r\n\r\n" + "\r\n".join(line + "  " for line in code.splitlines()) + "\r\n\r\n\t"


def test_whitespace_and_line_endings_do_not_make_the_starter_code_the_students_own() -> None:
    starter = Exercise.objects.get(slug=SLUG).starter_code
    assert is_starter_code(code=starter, starter_code=starter)
    assert is_starter_code(code=_reformatted(starter), starter_code=starter)
    assert not is_starter_code(code=starter + "\n# mine\n", starter_code=starter)
    assert not is_starter_code(code="", starter_code="")


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_the_form_refuses_the_unchanged_starter_code(student, counted, htmx: bool) -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    c = Client()
    c.force_login(student)
    headers = {"HX-Request": "true"} if htmx else {}
    response = c.post(
        f"/exercises/{SLUG}/submit/",
        {"code": _reformatted(exercise.starter_code)},
        headers=headers,
        follow=not htmx,
    )
    assert response.status_code == 200
    assert MSG_CODE_UNCHANGED in response.content.decode()
    assert not Submission.objects.exists()
    assert counted == []


def test_the_api_refuses_the_unchanged_starter_code(student, counted) -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    c = APIClient()
    c.force_authenticate(student)
    response = c.post(
        "/api/submissions/",
        {"exercise": SLUG, "code": _reformatted(exercise.starter_code)},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": MSG_CODE_UNCHANGED}
    assert not Submission.objects.exists()
    assert counted == []
    # One character of the student's own and it is accepted (and counted).
    response = c.post(
        "/api/submissions/",
        {"exercise": SLUG, "code": exercise.starter_code + "# started\n"},
        format="json",
    )
    assert response.status_code == 201
    assert Submission.objects.count() == 1
    assert counted == [str(student.pk)]


def test_the_statement_puts_what_to_write_first_and_the_contract_after() -> None:
    parts = exercise_statement_parts(exercise=Exercise.objects.get(slug=SLUG))
    assert "<code>attention(Q, K, V, mask=None)</code>" in parts.essentials_html
    assert "Contract" not in parts.essentials_html
    assert parts.rest_html.startswith("<h3")
    assert "What the hidden checks test" in parts.rest_html


def test_misconception_texts_are_rendered_without_backticks() -> None:
    for d in misconceptions_described(codes=["softmax-wrong-axis", "batch-transpose"]):
        assert "`" not in d["title_html"] and "`" not in d["explanation_html"]
        assert "<code>" in d["title_html"] + d["explanation_html"]
        assert "`" in d["title"] + d["explanation"]  # the API keeps its Markdown


def _row(user, **fields: object) -> Submission:
    return Submission.objects.create(
        user=user,
        exercise=Exercise.objects.get(slug=SLUG),
        seed=3,
        code=fields.pop("code", "import numpy as np\n"),
        **fields,
    )


def test_history_rows_say_why_an_error_or_a_timeout_was_not_evaluated(student) -> None:
    syntax = _row(
        student,
        status="error",
        code="def attention(Q, K, V, mask=None):\n    return <b>$x$</b>\n",
        message=MSG_SYNTAX_ERROR.format(line=2, msg="invalid syntax <b>$x$</b>"),
    )
    timeout = _row(student, status="error", message=MSG_CPU_LIMIT.format(seconds=2))
    stopped = _row(
        student,
        status="failed",
        score=0.25,
        message=MSG_STOPPED.format(reason=MSG_CPU_LIMIT.format(seconds=2)),
    )
    passed = _row(student, status="passed", score=1.0, message="All 8 checks passed.")
    c = Client()
    c.force_login(student)
    html = c.get(f"/exercises/{SLUG}/history/").content.decode()
    reasons = html.split('class="history-reason no-math">')[1:]
    assert len(reasons) == 3, html
    texts = [r.split("</span>", 1)[0] for r in reasons]  # newest first
    assert texts[0] == MSG_CPU_LIMIT.format(seconds=2)  # the stopped one: the limit it hit
    assert texts[1] == MSG_CPU_LIMIT.format(seconds=2)
    # The student's own text, escaped: never markup.
    assert texts[2] == "SyntaxError: invalid syntax &lt;b&gt;$x$&lt;/b&gt; (line 2)"
    assert "<b>$x$</b>" not in html
    assert {syntax.pk, timeout.pk, stopped.pk, passed.pk} == set(
        Submission.objects.values_list("pk", flat=True)
    )
