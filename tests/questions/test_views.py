"""The candidate flow in HTML: answer first, then the reveal; plain forms, no JS needed."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from questions import services, views
from questions.models import CheckKind, Question, Status
from tests.questions.conftest import GOOD_ANSWER
from tests.questions.leaks import leaked, plant_markers

pytestmark = pytest.mark.django_db


def detail(question: Question) -> str:
    return reverse("questions:detail", kwargs={"slug": question.slug})


def answer(client: Client, question: Question, text: str = GOOD_ANSWER):
    return client.post(reverse("questions:answer", kwargs={"slug": question.slug}), {"text": text})


def test_list_and_filters(client: Client, seed_content: None) -> None:
    body = client.get(reverse("questions:list")).content.decode()
    for slug in ("why-divide-before-softmax", "scaled-dot-product-attention-by-hand"):
        assert f"/questions/{slug}/" in body
    body = client.get(reverse("questions:list"), {"role": "ai-data-systems"}).content.decode()
    assert "why-divide-before-softmax" in body and "by-hand" not in body
    body = client.get(reverse("questions:list"), {"level": "L1"}).content.decode()
    assert "why-divide-before-softmax" not in body and "by-hand" in body
    assert '<label for="id_role">' in body and '<label for="id_level">' in body


def test_drafts_are_hidden(client: Client, question: Question) -> None:
    services.question_unpublish(question=question)
    assert question.slug not in client.get(reverse("questions:list")).content.decode()
    assert client.get(detail(question)).status_code == 404


SLUGS = [
    "why-divide-before-softmax",
    "scaled-dot-product-attention-by-hand",
    "why-divide-before-mixing",
]


@pytest.mark.parametrize("slug", SLUGS)
def test_nothing_leaks_before_the_attempt(client: Client, seed_content: None, slug: str) -> None:
    question = Question.objects.get(slug=slug)
    markers = plant_markers(question)
    response = client.get(detail(question))
    assert response.status_code == 200
    body = response.content.decode()
    assert leaked(body) == []
    assert "Wrong answers interviewers hear" not in body
    # the same page after the attempt shows them: the markers do work
    answer(client, question, "softmax saturates")
    body = client.get(detail(question)).content.decode()
    expected = {m[6:-2] for k, m in markers.items() if not k.startswith("expected")}
    assert set(leaked(body)) == expected


def test_answer_then_reveal(client: Client, question: Question) -> None:
    markers = plant_markers(question)
    response = answer(client, question, "A larger learning rate recovers it.")
    assert response.status_code == 302
    assert response["Location"] == f"{detail(question)}#assessment"
    body = client.get(detail(question)).content.decode()
    assert views.ANSWER_SAVED in body
    assert markers["short"] in body and markers["full"] in body
    # the matched wrong answer and its rebuttal, and every rebuttal in <details>
    assert 'data-testid="wrong-match"' in body
    assert "a larger step cannot create information" in body
    for wa in question.wrong_answers.all():
        assert f'<details id="{wa.anchor}">' in body
        assert markers[f"rebuttal{wa.pk}"] in body
    # follow-ups visible, their expected answers not yet
    for fu in question.follow_ups.all():
        assert markers[f"prompt{fu.pk}"] in body
        assert markers[f"expected{fu.pk}"] not in body
    # the ten-minute demonstration links to the coding exercises
    for slug in ("scaled-dot-product-attention", "multi-head-attention", "stable-softmax"):
        assert f'href="/exercises/{slug}/"' in body


def test_follow_up_flow(client: Client, question: Question) -> None:
    markers = plant_markers(question)
    answer(client, question)
    shape = question.follow_ups.get(check_kind=CheckKind.SHAPE)
    url = reverse("questions:follow-up-answer", kwargs={"slug": question.slug, "pk": shape.pk})
    response = client.post(url, {f"fu{shape.pk}-text": "( n , n )"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"#{shape.anchor}")
    body = client.get(detail(question)).content.decode()
    assert markers[f"expected{shape.pk}"] in body
    assert "Correct shape." in body
    for fu in question.follow_ups.exclude(pk=shape.pk):
        assert markers[f"expected{fu.pk}"] not in body


def test_follow_up_before_question_is_refused(client: Client, question: Question) -> None:
    fu = question.follow_ups.first()
    url = reverse("questions:follow-up-answer", kwargs={"slug": question.slug, "pk": fu.pk})
    plant_markers(question)
    response = client.post(url, {f"fu{fu.pk}-text": "(n, n)"}, follow=True)
    assert services.FOLLOW_UP_BEFORE_QUESTION in response.content.decode()
    assert leaked(response.content.decode()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", services.ANSWER_EMPTY),
        ("   ", services.ANSWER_EMPTY),
        ("y" * (services.ANSWER_MAX_CHARS + 1), services.ANSWER_TOO_LONG),
    ],
)
def test_empty_and_oversized_answers(
    client: Client, question: Question, text: str, message: str
) -> None:
    plant_markers(question)
    response = answer(client, question, text)
    assert response.status_code == 400
    body = response.content.decode()
    assert message in body and 'role="alert"' in body
    assert leaked(body) == []


def test_answers_are_escaped(client: Client, question: Question) -> None:
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    answer(client, question, payload)
    body = client.get(detail(question)).content.decode()
    assert "<script>alert(1)" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_unknown_slug_is_a_real_404(client: Client, settings, seed_content: None) -> None:
    settings.DEBUG = False
    response = client.get("/questions/no-such-question/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
    assert "404.html" in [t.name for t in response.templates]
    response = client.post("/questions/no-such-question/answer/", {"text": "x"})
    assert response.status_code == 404


def test_anonymous_session_is_kept_and_claimed_on_login(
    client: Client, question: Question, alice
) -> None:
    markers = plant_markers(question)
    answer(client, question)
    token = client.session[services.CANDIDATE_SESSION_KEY]
    assert question.attempts.get().session_key == token
    assert markers["short"] in client.get(detail(question)).content.decode()
    # a fresh visitor sees nothing
    assert leaked(Client().get(detail(question)).content.decode()) == []
    client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"})
    assert question.attempts.get().user == alice
    body = client.get(reverse("questions:list")).content.decode()
    assert "Your recent answers" in body and "Answered" in body


def test_history_for_logged_in_users(client: Client, question: Question, alice) -> None:
    client.force_login(alice)
    answer(client, question, "softmax saturates")
    answer(client, question, GOOD_ANSWER)
    body = client.get(detail(question)).content.decode()
    assert "Your earlier answers" in body


def test_explainer_page(client: Client, seed_content: None) -> None:
    response = client.get(reverse("questions:explainer"))
    assert response.status_code == 200
    names = [t.name for t in response.templates]
    for name in ("variance", "saturation", "sqrt_vs_d", "judges"):
        assert f"explorables/{name}.html" in names
    body = response.content.decode()
    assert "$\\sqrt{d}$" in body  # math passes through untouched for KaTeX


def test_worked_example_explorable_is_on_the_question_page(
    client: Client, seed_content: None
) -> None:
    question = Question.objects.get(slug="scaled-dot-product-attention-by-hand")
    before = client.get(detail(question))
    assert "explorables/worked_example.html" not in [t.name for t in before.templates]
    answer(client, question, "softmax(QK^T / sqrt(d_k)) V")
    after = client.get(detail(question))
    assert "explorables/worked_example.html" in [t.name for t in after.templates]
    assert "[0.506 0.186 0.307]" in after.content.decode()


def test_preview_is_staff_only_and_shows_drafts(
    client: Client, question: Question, alice, instructor
) -> None:
    markers = plant_markers(question)
    services.question_unpublish(question=question)
    url = reverse("questions:preview", kwargs={"slug": question.slug})
    assert client.get(url).status_code == 302  # to the admin login
    client.force_login(alice)
    assert client.get(url).status_code == 302
    client.force_login(instructor)
    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert all(marker in body for marker in markers.values())
    assert "draft" in body


def test_question_status_default_is_draft() -> None:
    assert Question().status == Status.DRAFT


# --- The answer box: a counter, a clear message at the cap, the assessment first ------------


def test_answer_box_has_a_counter_and_no_silent_cut(client: Client, question: Question) -> None:
    body = client.get(detail(question)).content.decode()
    assert f'data-max-chars="{services.ANSWER_MAX_CHARS}"' in body
    assert 'data-cap-message="Your answer is longer than the' in body
    # maxlength would let the browser cut a long paste without a word
    assert "maxlength" not in body
    assert "js/questions.js" in body
    assert "<script>" not in body and "onclick" not in body  # no inline script (CSP)


def test_over_the_cap_keeps_the_text_and_says_so(client: Client, question: Question) -> None:
    text = "w " * services.ANSWER_MAX_CHARS
    response = answer(client, question, text)
    assert response.status_code == 400
    body = response.content.decode()
    assert services.ANSWER_TOO_LONG in body
    assert text.strip()[:200] in body  # nothing was cut: the candidate can shorten it
    assert not question.attempts.exists()


def test_browser_line_breaks_count_once(client: Client, question: Question, alice) -> None:
    """Browsers send CRLF; the counter counts a line break as one character, so does the cap."""
    line = "v" * 99
    text = "\r\n".join([line] * 40)  # 3999 characters as counted, 4038 bytes with CRLF
    client.force_login(alice)
    response = answer(client, question, text)
    assert response.status_code == 302
    assert question.attempts.get().text == "\n".join([line] * 40)


def test_after_answering_the_assessment_comes_before_answer_again(
    client: Client, question: Question
) -> None:
    answer(client, question)
    body = client.get(detail(question)).content.decode()
    assessment = body.index('id="assessment-heading"')
    again = body.index(">Answer again</h2>")
    short = body.index('id="short-heading"')
    assert assessment < again < short


def test_preview_tries_an_answer_with_evidence_and_stores_nothing(
    client: Client, question: Question, instructor
) -> None:
    client.force_login(instructor)
    url = reverse("questions:preview", kwargs={"slug": question.slug})
    body = client.get(url).content.decode()
    assert ">Try an answer</h2>" in body and f'action="{url}"' in body
    response = client.post(
        url, {"text": "The softmax saturates. A larger learning rate recovers the gradient."}
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Assessment of your trial answer" in body
    trial = response.context["trial"]
    points = {kp.slug: kp for kp in trial.key_points}
    assert points["softmax-saturates"].covered and points["softmax-saturates"].evidence
    assert "<mark>saturates</mark>" in body and "Counted:" in body
    assert trial.wrong_answer is not None and trial.wrong_answer.slug == "larger-learning-rate"
    assert "Triggered by:" in body
    assert not question.attempts.exists()
    empty = client.post(url, {"text": "  "})
    assert empty.status_code == 400 and services.ANSWER_EMPTY in empty.content.decode()


def test_preview_of_a_draft_question_takes_trial_answers(
    client: Client, question: Question, instructor
) -> None:
    services.question_unpublish(question=question)
    client.force_login(instructor)
    url = reverse("questions:preview", kwargs={"slug": question.slug})
    response = client.post(url, {"text": "Softmax saturates."})
    assert response.status_code == 200
    assert "this question is a <em>draft</em>" in response.content.decode()


@pytest.mark.django_db
def test_instructor_markdown_is_sanitised_on_the_page(client: Client, question: Question) -> None:
    question.prompt = (
        "Why? <script>alert('p')</script> <img src=x onerror=alert(1)> [link](javascript:alert(2))"
    )
    question.save()
    body = client.get(reverse("questions:detail", kwargs={"slug": question.slug})).content.decode()
    main = body[body.index("<main") : body.index("</main>")]
    assert "<script" not in main and "onerror" not in main and "javascript:" not in main


# --- Why the answer earned what it did; answering again; follow-ups that name a confusion ---


def test_the_candidate_sees_the_words_that_counted_per_key_point(
    client: Client, question: Question
) -> None:
    text = "The softmax saturates when scores are large. It does not make gradients vanish."
    answer(client, question, text)
    response = client.get(detail(question))
    body = response.content.decode()
    evidence = response.context["evidence"]
    points = {kp.slug: kp for kp in evidence.key_points}
    assert points["softmax-saturates"].covered
    assert points["softmax-saturates"].items[0].rules  # the rule is recorded
    assert 'data-testid="why-softmax-saturates"' in body and "<mark>saturates</mark>" in body
    assert "Not found in your answer." in body  # a missed key point says so
    # "Answer again" starts from the last answer.
    assert f">{text}</textarea>" in body


def test_no_known_wrong_answer_is_neutral_not_a_success(client: Client, question: Question) -> None:
    answer(client, question, "The softmax saturates.")
    body = client.get(detail(question)).content.decode()
    assert '<p class="neutral" data-testid="no-wrong-match">' in body
    assert '<p class="ok">Your answer does not resemble' not in body


def test_denied_evidence_is_listed_once_per_sentence() -> None:
    from questions.evidence import evidence_items

    sentence = "it is not true that the weights sum to one"
    raw = [
        {"slug": "sums-to-one", "matched": m, "negated": True, "sentence": sentence, "rule": r}
        for m, r in (("sum to one", "sum to one"), ("weights sum", "weights sum"), ("sum", "sum"))
    ]
    items = evidence_items(raw)
    assert len(items) == 1 and items[0].denied
    assert [r.rule for r in items[0].rules] == ["sum to one", "weights sum", "sum"]


def test_a_follow_up_names_the_confusion_behind_a_known_wrong_value(
    client: Client, question: Question
) -> None:
    from questions.assessment import short_answers

    answer(client, question)
    number = question.follow_ups.get(check_kind=CheckKind.NUMBER)
    url = reverse("questions:follow-up-answer", kwargs={"slug": question.slug, "pk": number.pk})
    client.post(url, {f"fu{number.pk}-text": "512"})
    body = client.get(detail(question)).content.decode()
    message = short_answers.NUMBER_KNOWN_WRONG.format(got=512, why=number.known_wrong["512"])
    assert message.startswith("Not quite: 512 is d_model, the model width")
    assert escape(message) in body
