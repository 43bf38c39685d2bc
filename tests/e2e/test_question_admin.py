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
    expect(judged.locator("details.why")).to_contain_text("larger-learning-rate")
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
    expect(earned.locator(".why mark")).to_have_text("flibbertigibbet")
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
    # "Answer again" starts from the answer just sent
    expect(page.get_by_role("textbox", name="Your answer", exact=True)).to_have_value(
        "The softmax saturates."
    )
    expect(page.locator("#id_text-counter")).to_have_text(
        f"22 / {services.ANSWER_MAX_CHARS} characters"
    )
    assert js_errors == []


def test_instructor_authors_a_question_from_sentences_and_tries_an_answer(
    instructor_page: Page, screenshot, js_errors: list[str]
) -> None:
    """No pattern typed: key points and a wrong answer as sentences, example answers, a trial;
    a trial judged wrong is kept as an example answer in one click."""
    page = instructor_page
    page.on("pageerror", lambda error: js_errors.append(str(error)))
    page.goto("/admin/questions/question/add/")
    page.locator("#id_title").fill("Why divide by √d_k")
    page.locator("#id_title").dispatch_event("change")  # the admin's slug follows change/keyup
    # the slug typed from the title keeps the square root as a word
    expect(page.locator("#id_slug")).to_have_value("why-divide-by-sqrt-d_k")
    expect(page.locator("#patterns-help")).to_contain_text("Patterns are optional")
    page.locator("#id_prompt").fill("Why are the scores divided by $\\sqrt{d_k}$?")
    page.locator("#id_short_answer").fill("To keep their spread near one.")
    page.locator("#id_full_answer").fill("The variance of a dot product grows with $d_k$.")
    page.get_by_text("Add another Key point").click()
    page.locator("#id_key_points-0-slug").fill("spread-grows")
    page.locator("#id_key_points-0-label").fill("The spread of the scores grows with d_k")
    page.get_by_text("Add another Wrong answer").click()
    page.locator("#id_wrong_answers-0-slug").fill("sums-to-one")
    page.locator("#id_wrong_answers-0-statement").fill("The division makes the weights sum to one.")
    page.locator("#id_wrong_answers-0-rebuttal").fill("The softmax already does that.")
    # the key-point table fits the window: nothing scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    table_width, box_width = page.locator("#key_points-group table").evaluate(
        "t => [t.getBoundingClientRect().width, t.closest('.inline-group').clientWidth]"
    )
    assert table_width <= box_width + 1, f"key points: {table_width} px in {box_width}"
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    question = Question.objects.get(slug="why-divide-by-sqrt-d_k")
    assert question.key_points.get().patterns == ""

    page.get_by_text("Add another Example answer").click()
    page.locator("#id_example_answers-0-text").fill(
        "The dot product adds d_k terms, so its spread grows with d_k."
    )
    page.locator("#example_answers-0").get_by_label("spread-grows", exact=True).check()
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert question.example_answers.count() == 1

    page.goto(f"/questions/{question.slug}/preview/")
    page.get_by_role("textbox", name="Your answer", exact=True).fill(
        "Longer vectors give larger dot products, so the scores spread out more."
    )
    page.get_by_role("button", name="Assess this answer").click()
    assessment = page.locator("#assessment")
    expect(assessment.locator('li[data-slug="spread-grows"]')).to_be_visible()
    judgement = assessment.locator("details.judgement")
    judgement.locator("summary").click()
    judgement.get_by_label("spread-grows", exact=True).check()
    judgement.get_by_role("button", name="Keep as an example answer").click()
    expect(page.locator(".messagelist, .messages")).to_contain_text(services.JUDGEMENT_KEPT)
    kept = question.example_answers.get(text__startswith="Longer vectors")
    assert kept.expected_key_points == ["spread-grows"]
    screenshot(page, "question-admin-authored-from-sentences")
    assert js_errors == []


def test_validate_is_folded_paged_typeset_and_takes_corrections(
    instructor_page: Page, screenshot
) -> None:
    page = instructor_page
    question = Question.objects.get(slug=SLUG)
    example_answers_sampled(question)
    # enough examples for a second page, cheap to assess
    ExampleAnswer.objects.bulk_create(
        ExampleAnswer(question=question, text=f"Short answer {i}.", ordering=1000 + i)
        for i in range(25)
    )
    page.goto(f"/admin/questions/question/{question.pk}/validate/")
    # the key points' maths is typeset (KaTeX, fetched by math.js under the CSP)
    expect(page.locator("#key-point-scores .katex").first).to_be_attached(timeout=30_000)
    # each key point's rules are folded, with how many examples each one counted in
    rules = page.locator('details.rules[data-slug="softmax-saturates"]')
    expect(rules.locator("table")).to_be_hidden()
    rules.locator("summary").click()
    expect(rules.locator("td.hits").first).to_be_visible()
    pages = page.get_by_role("navigation", name="Pages of examples")
    expect(pages).to_contain_text("Page 1 of 2")

    row = page.locator("#examples-table tbody tr").first
    pk = int(row.get_attribute("data-example"))
    example = ExampleAnswer.objects.get(pk=pk)
    wanted = "variance-grows" not in (example.expected_key_points or [])
    judgement = row.locator("details.judgement")
    judgement.locator("summary").click()
    box = judgement.get_by_label("variance-grows", exact=True)
    box.set_checked(wanted)
    judgement.get_by_role("button", name="Save these labels").click()
    expect(page.locator(".messagelist")).to_contain_text(services.JUDGEMENT_CORRECTED)
    example.refresh_from_db()
    assert ("variance-grows" in example.expected_key_points) is wanted
    screenshot(page, "question-admin-validate-folded")
