"""End to end in headless Chromium: the candidate flow, and authoring in the admin."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from questions.models import Question, Status, WrongAnswer

pytestmark = pytest.mark.e2e

SLUG = "why-divide-before-softmax"


def test_candidate_answers_sees_reveal_and_answers_a_follow_up(
    page: Page, screenshot, js_errors: list[str]
) -> None:
    page.goto("/questions/")
    page.get_by_role(
        "link", name="Why are the attention scores divided before the softmax?"
    ).click()
    expect(page).to_have_url(re.compile(f"/questions/{SLUG}/$"))
    # answer first: nothing of the answer is on the page yet
    expect(page.get_by_role("heading", name="Short answer")).to_have_count(0)
    expect(page.get_by_role("heading", name="Wrong answers interviewers hear")).to_have_count(0)
    # a grader diagnosis links to a rebuttal: before answering, the page says why it is absent
    page.goto(f"/questions/{SLUG}/#wrong-scale-values")
    expect(page.locator("#rebuttal-hint")).to_be_visible()

    page.get_by_role("textbox", name="Your answer", exact=True).fill(
        "The variance of q·k grows with d_k, so the softmax saturates. "
        "A larger learning rate recovers the lost gradient."
    )
    page.get_by_role("button", name="Submit my answer").click()

    assessment = page.locator("#assessment")
    expect(assessment.get_by_role("heading", name="Assessment of your answer")).to_be_visible()
    expect(assessment.get_by_test_id("score")).to_have_text("0.25")
    expect(assessment.get_by_test_id("wrong-match")).to_contain_text(
        "a larger step cannot create information"
    )
    expect(page.get_by_role("heading", name="Short answer")).to_be_visible()
    expect(page.get_by_role("heading", name="Full answer")).to_be_visible()
    expect(page.get_by_role("link", name="Exercise: stable-softmax")).to_have_attribute(
        "href", "/exercises/stable-softmax/"
    )

    # wrong answers: each opens its rebuttal, with the keyboard too
    rebuttal = page.locator("#wrong-scale-values .rebuttal")
    expect(rebuttal).to_be_hidden()
    page.locator("#wrong-scale-values summary").focus()
    page.keyboard.press("Enter")
    expect(rebuttal).to_be_visible()
    expect(rebuttal).to_contain_text("never reaches the softmax")

    # after answering, the same link opens that rebuttal
    page.goto(f"/questions/{SLUG}/#wrong-divide-by-dk")
    expect(page.locator("#wrong-divide-by-dk .rebuttal")).to_be_visible()

    # a follow-up: answered, checked, then its expected answer revealed
    first = page.locator("article.follow-up").first
    expect(first.get_by_role("heading", name="Expected answer")).to_have_count(0)
    first.get_by_label("Your answer to this follow-up").fill("( n , n )")
    first.get_by_role("button", name="Check my answer").click()
    first = page.locator("article.follow-up").first
    expect(first).to_contain_text("Correct shape.")
    expect(first.get_by_role("heading", name="Expected answer")).to_be_visible()
    expect(first).to_contain_text("one row per query")
    # KaTeX rendered the math on the page
    expect(page.locator(".katex").first).to_be_attached()
    screenshot(page, "questions-candidate-flow")
    assert js_errors == []


def test_candidate_sees_why_each_key_point_counted_and_answers_again(
    page: Page, screenshot, js_errors: list[str]
) -> None:
    text = (
        "The variance of q·k grows with d_k, so the softmax saturates. "
        "It is not true that the weights stop summing to one."
    )
    page.goto(f"/questions/{SLUG}/")
    page.get_by_role("textbox", name="Your answer", exact=True).fill(text)
    page.get_by_role("button", name="Submit my answer").click()
    assessment = page.locator("#assessment")
    # each key point says why: the words that counted, marked in their sentence
    saturates = assessment.get_by_test_id("why-softmax-saturates")
    expect(saturates).to_contain_text("Counted:")
    expect(saturates.locator("mark").first).to_contain_text("saturat")
    rule = saturates.locator("details.evidence-rules")
    rule.locator("summary").click()
    expect(rule.locator("code").first).to_be_visible()
    expect(assessment.get_by_test_id("why-gradients-vanish")).to_contain_text(
        "Not found in your answer."
    )
    # no known wrong answer is neutral, not a success
    expect(assessment.get_by_test_id("no-wrong-match")).not_to_have_class(re.compile(r"\bok\b"))
    # "Answer again" starts from the last answer
    again = page.get_by_role("textbox", name="Your answer", exact=True)
    expect(again).to_have_value(text)
    again.fill(text + " The gradients vanish.")
    page.get_by_role("button", name="Submit my answer").click()
    expect(page.locator("#assessment").get_by_test_id("why-gradients-vanish")).to_contain_text(
        "Counted:"
    )

    # a follow-up's foreseen wrong value names the confusion
    number = page.locator("article.follow-up").last
    number.get_by_label("Your answer to this follow-up").fill("512")
    number.get_by_role("button", name="Check my answer").click()
    expect(page.locator("article.follow-up").last).to_contain_text(
        "Not quite: 512 is d_model, the model width"
    )
    screenshot(page, "questions-candidate-why")
    assert js_errors == []


def test_instructor_adds_a_wrong_answer_and_sees_it(instructor_page: Page, screenshot) -> None:
    page = instructor_page
    question = Question.objects.get(slug=SLUG)
    count = question.wrong_answers.count()
    page.goto(f"/admin/questions/question/{question.pk}/change/")
    page.get_by_text("Add another Wrong answer").click()
    prefix = f"#id_wrong_answers-{count}"
    page.locator(f"{prefix}-slug").fill("softmax-is-optional")
    page.locator(f"{prefix}-statement").fill("The softmax could be dropped altogether.")
    page.locator(f"{prefix}-rebuttal").fill("Without it the weights are not a **distribution**.")
    page.locator(f"{prefix}-ordering").fill("9")
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert WrongAnswer.objects.filter(question=question, slug="softmax-is-optional").exists()

    # the preview shows it at once
    page.goto(f"/questions/{SLUG}/preview/")
    expect(page.locator("#wrong-softmax-is-optional")).to_contain_text("dropped altogether")

    # and so does the real page, after answering
    page.goto(f"/questions/{SLUG}/")
    expect(page.locator("#wrong-softmax-is-optional")).to_have_count(0)
    page.get_by_role("textbox", name="Your answer", exact=True).fill("Softmax saturates.")
    page.get_by_role("button", name="Submit my answer").click()
    wrong = page.locator("#wrong-softmax-is-optional")
    wrong.locator("summary").click()
    expect(wrong.locator(".rebuttal strong")).to_have_text("distribution")
    screenshot(page, "questions-instructor-adds-wrong-answer")


def test_the_list_filters_by_level_and_shows_each_questions_level_and_roles(
    page: Page, screenshot, js_errors: list[str]
) -> None:
    page.goto("/questions/")
    cards = page.locator(".question-cards > li")
    expect(cards).to_have_count(Question.objects.filter(status=Status.PUBLISHED).count())

    page.get_by_label("Level", exact=True).select_option(label="L3 · senior")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]level=L3\b"))
    senior = list(Question.objects.filter(level="L3", status=Status.PUBLISHED).order_by("ordering"))
    assert len(senior) >= 2
    expect(cards).to_have_count(len(senior))
    for card, question in zip(cards.all(), senior, strict=True):
        expect(card.get_by_role("link", name=question.title)).to_be_visible()
        expect(card.locator(".badge").first).to_have_text("L3 · senior")
        for role in question.roles.all():
            expect(card).to_contain_text(role.name)
    expect(page.get_by_text("No published question matches these filters.")).to_have_count(0)
    screenshot(page, "questions-list-l3")

    # Every level has questions, and a level combines with a role.
    for level in ("L1", "L2"):
        page.goto(f"/questions/?level={level}")
        expect(cards.first).to_be_visible()
    page.goto("/questions/?level=L3&role=ai-data-systems")
    expect(cards).to_have_count(
        Question.objects.filter(level="L3", roles__slug="ai-data-systems").count()
    )
    assert js_errors == []
