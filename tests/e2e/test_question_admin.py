"""End to end in headless Chromium: an instructor tests a question before candidates see it
(example answers and Validate, trial answers on unsaved changes), and the answer box's cap."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from questions import services
from questions.models import ExampleAnswer, KeyPoint, Question
from tests.e2e.flows import example_answers_sampled

pytestmark = pytest.mark.e2e

SLUG = "why-divide-before-softmax"


def test_instructor_adds_an_example_answer_and_validates(instructor_page: Page, screenshot) -> None:
    page = instructor_page
    question = Question.objects.get(slug=SLUG)
    example_answers_sampled(question)  # Validate, below, assesses every one on load
    page.goto(f"/admin/questions/question/{question.pk}/change/")
    count = int(page.locator("#id_example_answers-TOTAL_FORMS").input_value())
    page.get_by_text("Add another Example answer").click()
    prefix = f"#id_example_answers-{count}"
    page.locator(f"{prefix}-text").fill("A larger learning rate recovers the lost gradient.")
    row = page.locator(f"#example_answers-{count}")
    # expects a key point it does not make: Validate must flag it
    row.get_by_label("variance-grows", exact=True).check()
    page.locator(f"{prefix}-expected_wrong_answer").select_option("larger-learning-rate")
    page.locator(f"{prefix}-note").fill("browser test")
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    example = ExampleAnswer.objects.get(question=question, note="browser test")
    assert example.expected_key_points == ["variance-grows"]

    page.get_by_role("link", name="Validate", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/admin/questions/question/{question.pk}/validate/$"))
    judged = page.locator(f'#examples-table tr[data-example="{example.pk}"]')
    expect(judged).to_contain_text("✘ missed variance-grows")
    expect(judged).to_contain_text("larger-learning-rate → larger-learning-rate")
    expect(judged).to_contain_text("✘ wrong")
    expect(judged.locator(".evidence")).to_contain_text("larger-learning-rate")
    expect(
        page.locator('#wrong-answer-scores tr[data-slug="larger-learning-rate"]')
    ).to_be_visible()
    expect(page.locator('#key-point-scores tr[data-slug="variance-grows"]')).to_be_visible()
    screenshot(page, "question-admin-validate")


def test_instructor_tries_an_answer_on_unsaved_changes(
    instructor_page: Page, screenshot, js_errors: list[str]
) -> None:
    page = instructor_page
    question = Question.objects.get(slug=SLUG)
    assert question.is_published
    point = KeyPoint.objects.get(question=question, slug="softmax-saturates")
    page.goto(f"/admin/questions/question/{question.pk}/change/")
    # an edit, not saved: the key point is now earned by a made-up word only
    row_id = page.locator(f"input[name^='key_points-'][name$='-id'][value='{point.pk}']")
    prefix = row_id.get_attribute("name").removesuffix("-id")
    patterns = page.locator(f"textarea[name='{prefix}-patterns']")
    patterns.fill(r"\bflibbertigibbet\b")
    with page.expect_popup() as popup:
        page.get_by_role("button", name="Preview unsaved changes").click()
    preview = popup.value
    preview.on("pageerror", lambda error: js_errors.append(str(error)))
    expect(preview.locator("#preview-banner")).to_contain_text("unsaved changes")

    box = preview.get_by_role("textbox", name="Your answer", exact=True)
    box.fill("The softmax goes flibbertigibbet.")
    preview.get_by_role("button", name="Assess this answer").click()
    assessment = preview.locator("#assessment")
    expect(
        assessment.get_by_role("heading", name="Assessment of your trial answer")
    ).to_be_visible()
    earned = assessment.locator('li[data-slug="softmax-saturates"]')
    expect(earned).to_have_class(re.compile(r"\bok\b"))
    expect(earned.locator(".evidence")).to_contain_text("flibbertigibbet")
    expect(preview.locator("#preview-banner")).to_contain_text("unsaved changes")
    screenshot(preview, "question-admin-preview-draft")

    # nothing was saved: the question is online, with its saved patterns
    assert KeyPoint.objects.get(pk=point.pk).patterns == point.patterns
    assert Question.objects.get(pk=question.pk).is_published
    assert not question.attempts.exists()

    # a question still in draft (never online) takes trial answers on its preview too
    services.question_unpublish(question=question)
    preview.goto(f"/questions/{SLUG}/preview/")
    expect(preview.locator("#preview-banner")).to_contain_text("draft")
    preview.get_by_role("textbox", name="Your answer", exact=True).fill(
        "A larger learning rate recovers the lost gradient."
    )
    preview.get_by_role("button", name="Assess this answer").click()
    expect(preview.get_by_role("heading", name="Assessment of your trial answer")).to_be_visible()
    expect(preview.get_by_test_id("wrong-match")).to_contain_text("larger-learning-rate")
    assert js_errors == []


def test_back_to_editing_from_the_preview_keeps_the_unsaved_edits(
    instructor_page: Page, screenshot
) -> None:
    page = instructor_page
    question = Question.objects.get(slug=SLUG)
    saved_title = question.title
    point = KeyPoint.objects.get(question=question, slug="softmax-saturates")
    page.goto(f"/admin/questions/question/{question.pk}/change/")
    page.locator("#id_title").fill("An edited title, not saved")
    row_id = page.locator(f"input[name^='key_points-'][name$='-id'][value='{point.pk}']")
    prefix = row_id.get_attribute("name").removesuffix("-id")
    page.locator(f"textarea[name='{prefix}-patterns']").fill(r"\bflibbertigibbet\b")
    with page.expect_popup() as popup:
        page.get_by_role("button", name="Preview unsaved changes").click()
    preview = popup.value
    expect(preview.get_by_role("heading", level=1)).to_have_text("An edited title, not saved")

    preview.get_by_role("link", name="Back to editing").click()
    expect(preview.locator("#draft-restored")).to_be_visible()
    expect(preview.locator("#id_title")).to_have_value("An edited title, not saved")
    expect(preview.locator(f"textarea[name='{prefix}-patterns']")).to_have_value(
        r"\bflibbertigibbet\b"
    )
    screenshot(preview, "question-admin-back-to-editing")
    # Still unsaved, until the instructor saves from here.
    assert Question.objects.get(pk=question.pk).title == saved_title
    preview.locator("input[name=_continue]").click()
    expect(preview.locator(".messagelist")).to_contain_text("was changed successfully")
    assert Question.objects.get(pk=question.pk).title == "An edited title, not saved"
    assert KeyPoint.objects.get(pk=point.pk).patterns == r"\bflibbertigibbet\b"


def test_answer_box_counts_and_says_so_at_the_cap(
    page: Page, screenshot, js_errors: list[str]
) -> None:
    page.goto(f"/questions/{SLUG}/")
    box = page.get_by_role("textbox", name="Your answer", exact=True)
    counter = page.locator("#id_text-counter")
    expect(counter).to_have_text(f"0 / {services.ANSWER_MAX_CHARS} characters")
    box.fill("Softmax saturates.")
    expect(counter).to_have_text(f"18 / {services.ANSWER_MAX_CHARS} characters")
    box.fill("x" * services.ANSWER_MAX_CHARS)
    expect(counter).to_contain_text("you have reached the cap")
    box.fill("x" * (services.ANSWER_MAX_CHARS + 5))
    # nothing is cut: the whole text stays, and the page says what to do
    assert len(box.input_value()) == services.ANSWER_MAX_CHARS + 5
    expect(counter).to_contain_text(f"{services.ANSWER_MAX_CHARS + 5} / ")
    expect(counter).to_contain_text("5 over")
    expect(counter).to_contain_text(services.ANSWER_TOO_LONG)
    page.get_by_role("button", name="Submit my answer").click()
    expect(page).to_have_url(re.compile(f"/questions/{SLUG}/$"))  # not sent
    expect(page.get_by_role("heading", name="Short answer")).to_have_count(0)
    screenshot(page, "question-answer-cap")

    # shortened, it is sent; the assessment comes first, the "answer again" box below it
    box.fill("The softmax saturates.")
    expect(counter).not_to_have_class(re.compile(r"\bover\b"))
    page.get_by_role("button", name="Submit my answer").click()
    assessment = page.get_by_role("heading", name="Assessment of your answer")
    again = page.get_by_role("heading", name="Answer again")
    expect(assessment).to_be_visible()
    assert assessment.bounding_box()["y"] < again.bounding_box()["y"]
    expect(page.locator("#id_text-counter")).to_have_text(
        f"0 / {services.ANSWER_MAX_CHARS} characters"
    )
    assert js_errors == []
