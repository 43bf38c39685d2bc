"""The REST API: reads never reveal before an attempt; attempts are private to their owner."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from accounts.services.api_tokens import api_token_issue
from questions import api, services
from questions.models import Attempt, CheckKind, Question
from tests.questions.conftest import GOOD_ANSWER
from tests.questions.leaks import leaked, plant_markers

pytestmark = pytest.mark.django_db

DETAIL = "/api/questions/why-divide-before-softmax/"


@pytest.fixture
def client() -> APIClient:
    return APIClient()


def test_list_is_public_and_filterable(client: APIClient, seed_content: None) -> None:
    response = client.get("/api/questions/")
    assert response.status_code == 200
    assert {q["slug"] for q in response.json()} == {
        "why-divide-before-softmax",
        "scaled-dot-product-attention-by-hand",
        "why-divide-before-mixing",
        "which-dimension-in-multi-head",
        "why-root-dk-not-dk",
        "what-flashattention-changes",
        "is-the-scale-ever-different",
        "why-scale-at-initialisation",
        "incident-loss-flattens",
        "does-the-scale-change-the-winner",
    }
    only = client.get("/api/questions/", {"role": "inference-engineering"}).json()
    assert [q["slug"] for q in only] == [
        "why-divide-before-softmax",
        "why-root-dk-not-dk",
        "what-flashattention-changes",
        "is-the-scale-ever-different",
        "why-scale-at-initialisation",
        "incident-loss-flattens",
        "does-the-scale-change-the-winner",
    ]
    senior = client.get("/api/questions/", {"level": "L3"}).json()
    assert len(senior) >= 2 and all(q["level"] == "L3" for q in senior)
    assert all(q["level"] == "L1" for q in client.get("/api/questions/", {"level": "L1"}).json())


def test_nothing_leaks_before_the_attempt(client: APIClient, question: Question, alice) -> None:
    markers = plant_markers(question)
    for who in (None, alice):
        client.force_authenticate(who)
        assert leaked(client.get("/api/questions/").content.decode()) == []
        body = client.get(DETAIL)
        assert body.json()["reveal"] is None
        assert leaked(body.content.decode()) == []
    client.force_authenticate(alice)
    response = client.post(
        "/api/attempts/", {"question": question.slug, "text": GOOD_ANSWER}, format="json"
    )
    assert response.status_code == 201
    data = response.json()
    assert data["assessment"]["score"] == 1.0
    reveal = data["reveal"]
    assert markers["short"] in reveal["short_answer_html"]
    assert markers["full"] in reveal["full_answer_html"]
    assert all(fu["expected_answer_html"] is None for fu in reveal["follow_ups"])
    assert {w["url"] for w in reveal["wrong_answers"]} >= {
        "/questions/why-divide-before-softmax/#wrong-scale-values"
    }
    # now the detail reveals for alice, and still not for anyone else
    assert client.get(DETAIL).json()["reveal"] is not None
    client.force_authenticate(None)
    assert leaked(client.get(DETAIL).content.decode()) == []


def test_follow_up_attempt_reveals_its_expected_answer(
    client: APIClient, question: Question, alice
) -> None:
    client.force_authenticate(alice)
    number = question.follow_ups.get(check_kind=CheckKind.NUMBER)
    early = client.post(
        "/api/attempts/",
        {"question": question.slug, "follow_up": number.pk, "text": "64"},
        format="json",
    )
    assert early.status_code == 409  # well formed; answer the question first
    assert early.json() == {"follow_up": [services.FOLLOW_UP_BEFORE_QUESTION]}
    client.post("/api/attempts/", {"question": question.slug, "text": "x y z"}, format="json")
    response = client.post(
        "/api/attempts/",
        {"question": question.slug, "follow_up": number.pk, "text": "64"},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["assessment"]["correct"] is True
    fus = {fu["id"]: fu for fu in response.json()["reveal"]["follow_ups"]}
    assert "64, the head width" in fus[number.pk]["expected_answer_html"]
    assert sum(fu["expected_answer_html"] is not None for fu in fus.values()) == 1


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"question": "why-divide-before-softmax", "text": ""}, "text", services.ANSWER_EMPTY),
        ({"question": "why-divide-before-softmax", "text": "  "}, "text", services.ANSWER_EMPTY),
        ({"question": "why-divide-before-softmax"}, "text", services.ANSWER_EMPTY),
        (
            {
                "question": "why-divide-before-softmax",
                "text": "z" * (services.ANSWER_MAX_CHARS + 1),
            },
            "text",
            services.ANSWER_TOO_LONG,
        ),
        (
            {"question": "why-divide-before-softmax", "follow_up": "x", "text": "hi"},
            "follow_up",
            None,
        ),
    ],
)
def test_malformed_bodies_are_400_with_field_errors(
    client: APIClient, question: Question, alice, body: dict, field: str, message: str | None
) -> None:
    client.force_authenticate(alice)
    response = client.post("/api/attempts/", body, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert field in errors
    if message:
        assert errors[field] == [message]
    assert not Attempt.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"question": "nope", "text": "hi"}, "question", api.QUESTION_NOT_FOUND),
        (
            {"question": "why-divide-before-softmax", "follow_up": 999999, "text": "hi"},
            "follow_up",
            api.FOLLOW_UP_NOT_FOUND,
        ),
    ],
)
def test_unknown_questions_and_follow_ups_are_404_with_field_errors(
    client: APIClient, question: Question, alice, body: dict, field: str, message: str
) -> None:
    client.force_authenticate(alice)
    response = client.post("/api/attempts/", body, format="json")
    assert response.status_code == 404
    assert response.json() == {field: [message]}
    assert not Attempt.objects.exists()


def test_non_json_body_is_400(client: APIClient, question: Question, alice) -> None:
    client.force_authenticate(alice)
    response = client.post("/api/attempts/", "{not json", content_type="application/json")
    assert response.status_code == 400


def test_draft_question_is_invisible(client: APIClient, question: Question, alice) -> None:
    services.question_unpublish(question=question)
    assert client.get(DETAIL).status_code == 404
    client.force_authenticate(alice)
    response = client.post(
        "/api/attempts/", {"question": question.slug, "text": "x"}, format="json"
    )
    assert response.json() == {"question": [api.QUESTION_NOT_FOUND]}


def test_attempts_need_authentication(client: APIClient, question: Question) -> None:
    assert client.get("/api/attempts/").status_code in (401, 403)
    response = client.post(
        "/api/attempts/", {"question": question.slug, "text": "x"}, format="json"
    )
    assert response.status_code in (401, 403)


def test_no_one_reads_another_users_attempts(
    client: APIClient, question: Question, alice, bob
) -> None:
    mine = services.attempt_create(question=question, user=alice, text="alice's answer")
    services.attempt_create(question=question, session_key="anon", text="anonymous answer")
    client.force_authenticate(bob)
    assert client.get("/api/attempts/").json() == []
    assert client.get(f"/api/attempts/{mine.pk}/").status_code == 404
    assert client.get(DETAIL).json()["reveal"] is None
    client.force_authenticate(alice)
    listed = client.get("/api/attempts/").json()
    assert [a["id"] for a in listed] == [mine.pk]
    assert client.get(f"/api/attempts/{mine.pk}/").json()["text"] == "alice's answer"


def test_token_auth(client: APIClient, question: Question, alice) -> None:
    token = api_token_issue(user=alice).token
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.post(
        "/api/attempts/", {"question": question.slug, "text": "hi"}, format="json"
    )
    assert response.status_code == 201
    assert Attempt.objects.get().user == alice


def test_session_auth_enforces_csrf(question: Question, alice) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(
        "/api/attempts/", {"question": question.slug, "text": "hi"}, format="json"
    )
    assert response.status_code == 403


def test_schema_lists_the_api_and_leaks_nothing(client: APIClient, question: Question) -> None:
    plant_markers(question)
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    text = response.content.decode()
    schema = json.loads(text) if text.lstrip().startswith("{") else None
    for path in (
        "/api/questions/",
        "/api/questions/{slug}/",
        "/api/attempts/",
        "/api/attempts/{id}/",
    ):
        assert path in text
    assert leaked(text) == []
    for wa in question.wrong_answers.all():
        assert wa.rebuttal.split(" zzleak")[0][:40] not in text
    assert question.short_answer.split(" zzleak")[0][:40] not in text
    if schema:
        assert "AttemptCreate" in json.dumps(schema)


def test_api_over_the_cap_is_refused_with_the_form_s_message(
    client: APIClient, question: Question, alice
) -> None:
    client.force_authenticate(alice)
    text = "q" * (services.ANSWER_MAX_CHARS + 1)
    response = client.post(
        "/api/attempts/", {"question": "why-divide-before-softmax", "text": text}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"text": [services.ANSWER_TOO_LONG]}
    at_cap = client.post(
        "/api/attempts/",
        {"question": "why-divide-before-softmax", "text": "q" * services.ANSWER_MAX_CHARS},
        format="json",
    )
    assert at_cap.status_code == 201
    assert len(at_cap.json()["text"]) == services.ANSWER_MAX_CHARS  # stored whole, not cut


def test_api_counts_a_crlf_line_break_once(client: APIClient, question: Question, alice) -> None:
    client.force_authenticate(alice)
    text = "\r\n".join(["v" * 99] * 40)  # 3999 characters as the page's counter counts them
    response = client.post(
        "/api/attempts/", {"question": "why-divide-before-softmax", "text": text}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["text"] == "\n".join(["v" * 99] * 40)
