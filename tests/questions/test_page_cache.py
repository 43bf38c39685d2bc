"""The question page is cheap for a first visit and never stale, also while the workers grade.

What every visitor sees is kept per process and checked against a shared version; what is
someone's own (the CSRF token, their answers, being logged in) is made for each request.
"""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from questions import selectors
from questions.models import Question, Role
from tests.questions.conftest import GOOD_ANSWER

pytestmark = pytest.mark.django_db

# A first visit to a question seen before: no query at all (no session, no attempts to read).
ANONYMOUS_MAX_QUERIES = 0
# Filling the copy: the question, its roles, follow-ups, wrong answers and key points.
FILL_MAX_QUERIES = 5


def detail(question: Question) -> str:
    return reverse("questions:detail", kwargs={"slug": question.slug})


def visit(question: Question, client: Client | None = None) -> tuple[str, int]:
    """The page body and the number of queries it took."""
    with CaptureQueriesContext(connection) as queries:
        response = (client or Client()).get(detail(question))
    assert response.status_code == 200
    return response.content.decode(), len(queries.captured_queries)


def csrf_in_form(body: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    assert match, "the answer form has no CSRF token"
    return match.group(1)


def test_an_anonymous_visit_makes_no_query_once_kept(question: Question) -> None:
    _, filling = visit(question)
    assert filling <= FILL_MAX_QUERIES
    body, queries = visit(question)
    assert queries <= ANONYMOUS_MAX_QUERIES
    assert question.title in body


def test_an_edit_of_the_question_shows_at_once(question: Question) -> None:
    visit(question)
    question.title = "Why divide, edited"
    question.prompt = "An edited prompt with **bold** words."
    question.save()
    body, queries = visit(question)
    assert queries > 0  # read again
    assert "Why divide, edited" in body
    assert "An edited prompt with <strong>bold</strong> words." in body


def test_an_edit_of_a_child_row_or_a_role_shows_at_once(question: Question) -> None:
    client = Client()
    client.post(reverse("questions:answer", kwargs={"slug": question.slug}), {"text": GOOD_ANSWER})
    visit(question, client)
    follow_up = question.follow_ups.first()
    follow_up.prompt = "A follow-up prompt, edited."
    follow_up.save()  # the question row itself is not saved
    assert "A follow-up prompt, edited." in visit(question, client)[0]

    role = question.roles.first()
    role.name = "Renamed role"
    role.save()
    assert "Renamed role" in visit(question)[0]
    question.roles.remove(role)
    assert "Renamed role" not in visit(question)[0]
    extra = Role.objects.create(slug="added-role", name="An added role", ordering=99)
    question.roles.add(extra)
    assert "An added role" in visit(question)[0]


def test_another_process_edit_is_seen_through_the_shared_version(question: Question) -> None:
    visit(question)
    # Another web process saved an edit: the shared version changed, our copy is old.
    Question.objects.filter(pk=question.pk).update(title="Edited elsewhere")  # no signal
    cache.set(selectors.CONTENT_VERSION_KEY, "another-process-version", timeout=None)
    assert "Edited elsewhere" in visit(question)[0]


def test_unpublishing_hides_the_kept_page(question: Question) -> None:
    from questions import services

    visit(question)
    services.question_unpublish(question=question)
    assert Client().get(detail(question)).status_code == 404


def test_each_visitor_gets_their_own_form_token_and_state(question: Question, alice) -> None:
    first, second = Client(), Client()
    body_first, body_second = visit(question, first)[0], visit(question, second)[0]
    assert csrf_in_form(body_first) != csrf_in_form(body_second)
    assert "Log in" in body_first

    alice_client = Client(enforce_csrf_checks=True)
    alice_client.force_login(alice)
    body = visit(question, alice_client)[0]
    assert "alice" in body and "Log out" in body
    response = alice_client.post(
        reverse("questions:answer", kwargs={"slug": question.slug}),
        {"text": GOOD_ANSWER, "csrfmiddlewaretoken": csrf_in_form(body)},
    )
    assert response.status_code == 302
    body = visit(question, alice_client)[0]
    assert 'id="assessment"' in body and "Short answer" in body
    # The revealed page of one visitor never becomes anyone else's.
    assert 'id="assessment"' not in visit(question, first)[0]


def test_a_cache_failure_serves_from_the_database(
    question: Question, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(*_: object, **__: object) -> None:
        raise ConnectionError("cache down")

    monkeypatch.setattr(selectors, "_content_cache_down_until", 0.0)
    monkeypatch.setattr(selectors.cache, "get", down)
    body, queries = visit(question)
    assert question.title in body and queries > 0
    # Within the retry delay the cache is not asked again: no timeout paid per page.
    monkeypatch.setattr(selectors.cache, "get", lambda *a, **k: pytest.fail("asked again"))
    assert question.title in visit(question)[0]
