"""Authoring in the admin: staff only; instructors edit content, preview and publish."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from questions import admin as admin_module
from questions import admin_forms, content_files, services
from questions.assessment import PATTERN_CATASTROPHIC
from questions.models import Attempt, ExampleAnswer, KeyPoint, Question, Status
from tests.factories import student_create, user_create

pytestmark = pytest.mark.django_db

INLINE_PREFIXES = ("follow_ups", "wrong_answers", "key_points", "example_answers")


def test_admin_is_staff_only(client: Client, alice) -> None:
    url = reverse("admin:questions_question_changelist")
    assert client.get(url).status_code == 302
    client.force_login(alice)
    assert client.get(url).status_code == 302


def test_instructor_edits_with_inlines(client: Client, instructor, question: Question) -> None:
    client.force_login(instructor)
    response = client.get(reverse("admin:questions_question_change", args=[question.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    for prefix in INLINE_PREFIXES:
        assert f"{prefix}-TOTAL_FORMS" in body
    assert reverse("questions:preview", kwargs={"slug": question.slug}) in body


def test_instructor_creates_and_publishes(client: Client, instructor, seed_content: None) -> None:
    client.force_login(instructor)
    data = {
        "title": "A new question",
        "slug": "a-new-question",
        "status": "draft",
        "level": "L1",
        "ordering": "5",
        "prompt": "Why?",
        "short_answer": "Because.",
        "full_answer": "Because, at length.",
        "exercise_slugs": "[]",
    }
    for prefix in INLINE_PREFIXES:
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    data.update(
        {
            "wrong_answers-TOTAL_FORMS": "1",
            "wrong_answers-0-slug": "new-wrong",
            "wrong_answers-0-statement": "It is magic.",
            "wrong_answers-0-rebuttal": "It is arithmetic.",
            "wrong_answers-0-ordering": "0",
        }
    )
    response = client.post(reverse("admin:questions_question_add"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    question = Question.objects.get(slug="a-new-question")
    assert question.wrong_answers.get().slug == "new-wrong"
    assert "a-new-question" not in client.get(reverse("questions:list")).content.decode()
    response = client.post(
        reverse("admin:questions_question_changelist"),
        {"action": "publish", "_selected_action": [question.pk]},
    )
    assert response.status_code == 302
    assert Question.objects.get(pk=question.pk).status == Status.PUBLISHED
    assert "a-new-question" in client.get(reverse("questions:list")).content.decode()


def test_instructors_cannot_forge_attempts(instructor) -> None:
    assert instructor.has_perm("questions.change_question")
    assert instructor.has_perm("questions.add_wronganswer")
    assert instructor.has_perm("questions.view_attempt")
    assert not instructor.has_perm("questions.change_attempt")
    assert not instructor.has_perm("questions.delete_attempt")


def test_attempt_admin_is_read_only(client: Client, instructor, question: Question) -> None:
    student = student_create(username="s", password="x-pass-123")
    attempt = Attempt.objects.create(user=student, question=question, text="t", assessment={})
    client.force_login(instructor)
    assert client.get(reverse("admin:questions_attempt_changelist")).status_code == 200
    assert (
        client.get(reverse("admin:questions_attempt_change", args=[attempt.pk])).status_code == 200
    )
    assert client.get(reverse("admin:questions_attempt_add")).status_code == 403


# --- Example answers, Validate, and the preview of unsaved changes ------------------------


def change_form_data(response) -> dict[str, object]:
    """The POST a browser would send for this change page, unchanged."""
    data: dict[str, object] = {}
    forms_ = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        forms_ += [formset.management_form, *formset.forms]
    for form in forms_:
        for bound in form:
            value = bound.value()  # a JSONField's already as the textarea shows it
            if value is None:
                continue
            if isinstance(value, bool):
                if value:
                    data[bound.html_name] = "on"
                continue
            data[bound.html_name] = value
    return data


@pytest.fixture
def author_without_change(db: None):
    """Staff who may view questions but not change them."""
    user = user_create(username="viewer", password="viewer-pass-123", is_staff=True)
    user.user_permissions.add(
        Permission.objects.get(codename="view_question", content_type__app_label="questions")
    )
    return user


def test_example_answer_inline_offers_the_question_s_slugs(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    response = client.get(reverse("admin:questions_question_change", args=[question.pk]))
    body = response.content.decode()
    assert 'name="example_answers-__prefix__-expected_key_points"' in body
    assert 'type="checkbox"' in body and 'value="variance-grows"' in body
    assert '<option value="divide-by-dk">divide-by-dk</option>' in body
    assert admin_forms.NO_WRONG_ANSWER_CHOICE[1] in body
    assert reverse("admin:questions_question_validate", args=[question.pk]) in body
    assert (
        'formaction="' + reverse("admin:questions_question_preview_draft", args=[question.pk])
        in body
    )


def test_instructor_adds_an_example_answer(client: Client, instructor, question: Question) -> None:
    client.force_login(instructor)
    url = reverse("admin:questions_question_change", args=[question.pk])
    data = change_form_data(client.get(url))
    n = int(data["example_answers-TOTAL_FORMS"])
    data.update(
        {
            "example_answers-TOTAL_FORMS": str(n + 1),
            f"example_answers-{n}-text": "Softmax saturates, so the gradients vanish.",
            f"example_answers-{n}-expected_key_points": ["softmax-saturates", "gradients-vanish"],
            f"example_answers-{n}-expected_wrong_answer": "",
            f"example_answers-{n}-note": "added in a test",
            f"example_answers-{n}-ordering": "99",
        }
    )
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    example = ExampleAnswer.objects.get(note="added in a test")
    assert example.expected_key_points == ["softmax-saturates", "gradients-vanish"]
    assert example.expected_wrong_answer == ""


def test_example_answer_form_refuses_key_points_of_another_target(question: Question) -> None:
    follow_up = question.follow_ups.get(key_points__slug="fu-no-error")
    form = admin_forms.ExampleAnswerForm(
        data={
            "text": "t",
            "follow_up": str(follow_up.pk),
            "expected_key_points": ["variance-grows", "fu-no-error"],
            "expected_wrong_answer": "divide-by-dk",
            "ordering": "0",
        },
        question=question,
    )
    assert not form.is_valid()
    assert form.errors["expected_key_points"] == [
        admin_forms.MSG_KEY_POINT_OTHER_TARGET.format(slugs="variance-grows")
    ]
    assert form.errors["expected_wrong_answer"] == [admin_forms.MSG_NO_WRONG_ANSWER_ON_FOLLOW_UP]
    unknown = admin_forms.ExampleAnswerForm(
        data={"text": "t", "expected_key_points": ["no-such-point"], "ordering": "0"},
        question=question,
    )
    assert not unknown.is_valid() and "expected_key_points" in unknown.errors


def test_validate_page_shows_the_judgements(client: Client, instructor, question: Question) -> None:
    ExampleAnswer.objects.create(
        question=question,
        text="A larger learning rate recovers the lost gradient.",
        expected_key_points=["variance-grows"],
        expected_wrong_answer="larger-learning-rate",
    )
    client.force_login(instructor)
    response = client.get(reverse("admin:questions_question_validate", args=[question.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="examples-table"' in body and 'id="key-point-scores"' in body
    assert 'id="wrong-answer-scores"' in body
    assert "✘ missed</span> <code>variance-grows</code>" in body
    assert "<code>larger-learning-rate</code> → <code>larger-learning-rate</code>" in body
    report = response.context["report"]
    assert any(v.example.text.startswith("A larger learning rate") for v in report.verdicts)
    assert "<style" not in body  # the CSP to come allows no inline style
    assert "css/question_admin.css" in body


def test_validate_without_examples_says_so(client: Client, instructor, question: Question) -> None:
    question.example_answers.all().delete()
    client.force_login(instructor)
    response = client.get(reverse("admin:questions_question_validate", args=[question.pk]))
    assert "has no example answers yet" in response.content.decode()


def test_validate_action_redirects_and_wants_one(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    changelist = reverse("admin:questions_question_changelist")
    response = client.post(
        changelist, {"action": "validate_action", "_selected_action": [question.pk]}
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/{question.pk}/validate/")
    both = list(Question.objects.values_list("pk", flat=True)[:2])
    response = client.post(
        changelist, {"action": "validate_action", "_selected_action": both}, follow=True
    )
    assert admin_module.MSG_VALIDATE_ONE in response.content.decode()


def test_staff_without_change_permission_gets_403(
    client: Client, author_without_change, question: Question
) -> None:
    client.force_login(author_without_change)
    validate = reverse("admin:questions_question_validate", args=[question.pk])
    draft = reverse("admin:questions_question_preview_draft", args=[question.pk])
    preview = reverse("questions:preview", kwargs={"slug": question.slug})
    assert client.get(validate).status_code == 403
    assert client.post(draft, {}).status_code == 403
    assert client.get(preview).status_code == 403
    assert client.post(preview, {"text": "Softmax saturates."}).status_code == 403


def test_preview_of_unsaved_changes_leaves_the_question_online(
    client: Client, instructor, question: Question
) -> None:
    assert question.is_published
    client.force_login(instructor)
    change = reverse("admin:questions_question_change", args=[question.pk])
    data = change_form_data(client.get(change))
    # An edit: a new title, and a key point's patterns that only match a made-up word.
    data["title"] = "An unsaved title"
    index = next(
        k.split("-")[1]
        for k, v in data.items()
        if k.startswith("key_points-") and k.endswith("-slug") and v == "softmax-saturates"
    )
    data[f"key_points-{index}-patterns"] = r"\bflibbertigibbet\b"
    draft_url = reverse("admin:questions_question_preview_draft", args=[question.pk])
    response = client.post(draft_url, data)
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(reverse("questions:preview", kwargs={"slug": question.slug}))
    token = location.split("draft=")[1]

    # nothing was saved: candidates see the saved question
    saved = Question.objects.get(pk=question.pk)
    assert saved.title == question.title and saved.is_published
    assert "An unsaved title" not in client.get(question.get_absolute_url()).content.decode()

    page = client.get(location).content.decode()
    assert "An unsaved title" in page and "Preview of your unsaved changes" in page

    # a trial answer is judged against the draft: the made-up word earns the key point
    preview = reverse("questions:preview", kwargs={"slug": question.slug})
    trial = client.post(preview, {"text": "Attention goes flibbertigibbet.", "draft": token})
    assert trial.status_code == 200
    points = {kp.slug: kp for kp in trial.context["trial"].key_points}
    assert points["softmax-saturates"].covered
    assert "flibbertigibbet" in points["softmax-saturates"].evidence
    assert "An unsaved title" in trial.content.decode()
    # and against the saved question without the token, where it earns nothing
    saved_trial = client.post(preview, {"text": "Attention goes flibbertigibbet."})
    points = {kp.slug: kp for kp in saved_trial.context["trial"].key_points}
    assert not points["softmax-saturates"].covered
    assert not Attempt.objects.exists()


def test_back_to_editing_shows_the_previewed_edit_unsaved(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    change = reverse("admin:questions_question_change", args=[question.pk])
    data = change_form_data(client.get(change))
    data["title"] = "An unsaved title"
    draft_url = reverse("admin:questions_question_preview_draft", args=[question.pk])
    location = client.post(draft_url, data)["Location"]
    token = location.split("draft=")[1]
    back = f"{change}?draft={token}"
    assert f'href="{back}">Back to editing' in client.get(location).content.decode()
    form = client.get(back).content.decode()
    assert 'value="An unsaved title"' in form and 'id="draft-restored"' in form
    assert Question.objects.get(pk=question.pk).title == question.title
    # An unknown token, or another session's: the saved question's form.
    for other in (client, Client()):
        if other is not client:
            other.force_login(instructor)
        stale = other.get(f"{change}?draft={token if other is not client else 'gone'}")
        assert stale.status_code == 200
        assert "An unsaved title" not in stale.content.decode()


def test_preview_of_an_invalid_edit_lists_its_errors(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    change = reverse("admin:questions_question_change", args=[question.pk])
    data = change_form_data(client.get(change))
    data["title"] = ""
    index = next(
        k.split("-")[1] for k in data if k.startswith("key_points-") and k.endswith("-patterns")
    )
    data[f"key_points-{index}-patterns"] = "(unclosed"
    draft_url = reverse("admin:questions_question_preview_draft", args=[question.pk])
    response = client.post(draft_url, data)
    assert response.status_code == 400
    body = response.content.decode()
    assert admin_module.MSG_DRAFT_INVALID in body
    assert "line 1 is not a valid regular expression" in body


def test_a_stale_draft_token_falls_back_to_the_saved_question(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    preview = reverse("questions:preview", kwargs={"slug": question.slug})
    response = client.get(f"{preview}?draft=gone", follow=True)
    body = response.content.decode()
    assert response.status_code == 200
    assert question.title in body
    assert "no longer kept" in body


def test_only_the_latest_examples_are_inlined(
    client: Client, instructor, question: Question
) -> None:
    """Hundreds of seeded examples must not turn the change form into thousands of fields."""
    ExampleAnswer.objects.bulk_create(
        ExampleAnswer(question=question, text=f"example {i}", ordering=i)
        for i in range(admin_module.INLINE_EXAMPLES_SHOWN + 5)
    )
    newest = ExampleAnswer.objects.create(question=question, text="the newest", ordering=0)
    client.force_login(instructor)
    url = reverse("admin:questions_question_change", args=[question.pk])
    response = client.get(url)
    formset = next(
        i.formset
        for i in response.context["inline_admin_formsets"]
        if i.formset.prefix == "example_answers"
    )
    shown = [form.instance for form in formset.forms]
    assert len(shown) == admin_module.INLINE_EXAMPLES_SHOWN
    assert newest in shown
    total = question.example_answers.count()
    assert f"All {total} example answers" in response.content.decode()
    # saving the page leaves the examples it did not show alone
    response = client.post(url, change_form_data(response))
    assert response.status_code == 302
    assert question.example_answers.count() == total


def test_example_answer_list_and_change(client: Client, instructor, question: Question) -> None:
    example = ExampleAnswer.objects.create(
        question=question, text="Softmax saturates.", expected_key_points=["softmax-saturates"]
    )
    client.force_login(instructor)
    changelist = reverse("admin:questions_exampleanswer_changelist")
    response = client.get(changelist, {"question__id__exact": question.pk})
    assert response.status_code == 200 and "Softmax saturates." in response.content.decode()
    assert client.get(reverse("admin:questions_exampleanswer_add")).status_code == 403
    change = reverse("admin:questions_exampleanswer_change", args=[example.pk])
    body = client.get(change).content.decode()
    assert 'value="gradients-vanish"' in body
    response = client.post(
        change,
        {
            "text": "Softmax saturates and the gradient vanishes.",
            "expected_key_points": ["softmax-saturates", "gradients-vanish"],
            "expected_wrong_answer": "",
            "note": "",
            "ordering": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    example.refresh_from_db()
    assert example.expected_key_points == ["softmax-saturates", "gradients-vanish"]


def test_validate_can_show_only_the_misjudged(
    client: Client, instructor, question: Question
) -> None:
    question.example_answers.all().delete()
    text = "A larger learning rate recovers the lost gradient."
    # labelled as the assessor judges it, whatever its version: this one is judged right
    judged = services.question_assess(question=question, text=text)
    right = ExampleAnswer.objects.create(
        question=question,
        text=text,
        expected_key_points=judged.key_points,
        expected_wrong_answer=judged.wrong_answer or "",
    )
    wrong = ExampleAnswer.objects.create(
        question=question, text="Softmax saturates.", expected_key_points=["gradients-vanish"]
    )
    client.force_login(instructor)
    url = reverse("admin:questions_question_validate", args=[question.pk])
    everything = client.get(url)
    assert [v.example for v in everything.context["shown"]] == [right, wrong]
    only = client.get(url, {"show": "wrong"})
    assert [v.example for v in only.context["shown"]] == [wrong]
    assert "Showing the 1 misjudged examples" in only.content.decode()


def test_saving_a_catastrophic_pattern_is_refused_with_its_reason(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    change = reverse("admin:questions_question_change", args=[question.pk])
    data = change_form_data(client.get(change))
    index = next(
        k.split("-")[1] for k in data if k.startswith("key_points-") and k.endswith("-patterns")
    )
    before = data[f"key_points-{index}-patterns"]
    data[f"key_points-{index}-patterns"] = f"{before}\n^(a+)+$"
    response = client.post(change, data)
    assert response.status_code == 200  # the form again, with the error
    assert escape(PATTERN_CATASTROPHIC.format(pattern="^(a+)+$")) in response.content.decode()
    question.refresh_from_db()
    assert "(a+)+" not in "".join(question.key_points.values_list("patterns", flat=True))


# --- Authoring help: patterns checked and expanded on save, the slug, the help block --------


def _key_point_form(patterns: str, question: Question) -> admin_forms.KeyPointForm:
    return admin_forms.KeyPointForm(
        data={"slug": "kp", "label": "A point", "patterns": patterns, "ordering": "0"},
        instance=KeyPoint(question=question),
    )


def test_an_unknown_pattern_set_is_a_form_error_naming_it(question: Question) -> None:
    form = _key_point_form("saturat\\w*\n@no-such-set", question)
    assert not form.is_valid()
    assert "'no-such-set'" in form.errors["patterns"][0]
    assert form.errors["patterns"][0] == content_files.UNKNOWN_SET.format(
        name="no-such-set", sets_file=content_files.PATTERN_SETS_FILE
    )


def test_a_known_pattern_set_is_expanded_as_the_content_files_expand_it(
    question: Question,
) -> None:
    form = _key_point_form("@variance-grows\nsaturat\\w*", question)
    assert form.is_valid(), form.errors
    stored = form.cleaned_data["patterns"].split("\n")
    assert stored == [*content_files.pattern_sets()["variance-grows"], "saturat\\w*"]


def test_a_catastrophic_or_broken_pattern_is_an_error_with_its_line(question: Question) -> None:
    form = _key_point_form("saturat\\w*\n(a+)+", question)
    assert not form.is_valid()
    assert form.errors["patterns"][0] == content_files.CATASTROPHIC_PATTERN.format(
        line=2, pattern="(a+)+"
    )
    assert PATTERN_CATASTROPHIC.split("{")[0] in form.errors["patterns"][0]
    broken = _key_point_form("(unclosed", question)
    assert not broken.is_valid()
    assert broken.errors["patterns"][0].startswith("line 1 is not a valid regular expression")


def test_a_stored_set_line_is_refused_by_the_model(question: Question) -> None:
    point = KeyPoint(question=question, slug="kp", label="A point", patterns="@variance-grows")
    with pytest.raises(ValidationError, match="variance-grows"):
        point.full_clean()


def test_patterns_are_optional(question: Question) -> None:
    assert _key_point_form("", question).is_valid()
    KeyPoint(question=question, slug="kp", label="A point", patterns="").full_clean()


def test_the_slug_keeps_the_square_root_as_a_word(client: Client, instructor) -> None:
    assert admin_forms.question_slug("Why divide by √d_k") == "why-divide-by-sqrt-d_k"
    assert admin_forms.question_slug("Scores ≈ 11") == "scores-about-11"
    form = admin_forms.QuestionForm(
        data={
            "title": "Why divide by √d_k",
            "slug": "",
            "status": "draft",
            "level": "L1",
            "ordering": "0",
            "prompt": "Why?",
            "short_answer": "Because.",
            "full_answer": "Because.",
            "exercise_slugs": "[]",
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["slug"] == "why-divide-by-sqrt-d_k"


def test_the_edit_page_explains_every_line_kind(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    body = client.get(reverse("admin:questions_question_change", args=[question.pk])).content
    body = body.decode()
    assert f'id="{admin_forms.PATTERNS_HELP_ID}"' in body
    for kind in ("a regular expression", "a concept", "a refuting cue", "a shared set"):
        assert kind in body
    assert f'aria-describedby="{admin_forms.PATTERNS_HELP_ID}"' in body
    assert "js/question_admin.js" in body


# --- Validate: paged, rules folded with their hits; a judgement marked wrong ---------------


def _examples(question: Question, n: int) -> None:
    ExampleAnswer.objects.bulk_create(
        ExampleAnswer(
            question=question,
            text=f"Answer {i}: the softmax saturates, so the gradients vanish.",
            expected_key_points=["softmax-saturates", "gradients-vanish"],
            ordering=i,
        )
        for i in range(n)
    )


def test_validate_pages_the_examples_and_counts_each_rule(
    client: Client, instructor, question: Question
) -> None:
    _examples(question, admin_module.VALIDATE_PAGE_SIZE + 5)
    client.force_login(instructor)
    url = reverse("admin:questions_question_validate", args=[question.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert len(response.context["shown"]) == admin_module.VALIDATE_PAGE_SIZE
    total = len(response.context["report"].verdicts)
    assert total == question.example_answers.count()
    last = -(-total // admin_module.VALIDATE_PAGE_SIZE)
    rest = total - (last - 1) * admin_module.VALIDATE_PAGE_SIZE
    assert len(client.get(f"{url}?page={last}").context["shown"]) == rest
    rows = {r.score.slug: r for r in response.context["report"].key_point_scores}
    saturates = rows["softmax-saturates"]
    authored = question.key_points.get(slug="softmax-saturates").patterns.split("\n")
    assert [line.rule for line in saturates.lines][: len(authored)] == authored
    assert sum(line.examples for line in saturates.lines) >= admin_module.VALIDATE_PAGE_SIZE + 5
    body = response.content.decode()
    assert 'class="rules"' in body and "<mark>" in body
    assert "js/math.js" in body  # the labels' $…$ are typeset


def _judgement(question: Question, **data: object) -> dict[str, object]:
    return {"next": reverse("questions:preview", args=[question.slug]), **data}


def test_a_trial_judgement_marked_wrong_becomes_an_example_answer(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    url = reverse("admin:questions_question_judgement", args=[question.pk])
    text = "Dividing keeps the weights from collapsing onto one key."
    response = client.post(
        url,
        _judgement(
            question, text=text, expected_key_points=["softmax-saturates"], expected_wrong_answer=""
        ),
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("questions:preview", args=[question.slug])
    example = ExampleAnswer.objects.get(question=question, text=text)
    assert example.expected_key_points == ["softmax-saturates"]
    messages = [str(m) for m in response.wsgi_request._messages]
    assert services.JUDGEMENT_KEPT in messages


def test_a_validate_judgement_marked_wrong_corrects_the_example(
    client: Client, instructor, question: Question
) -> None:
    _examples(question, 1)
    example = ExampleAnswer.objects.filter(question=question).latest("pk")
    before = ExampleAnswer.objects.filter(question=question).count()
    client.force_login(instructor)
    url = reverse("admin:questions_question_judgement", args=[question.pk])
    response = client.post(
        url,
        {"example": example.pk, "expected_key_points": ["softmax-saturates"], "next": ""},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:questions_question_validate", args=[question.pk])
    example.refresh_from_db()
    assert example.expected_key_points == ["softmax-saturates"]
    assert ExampleAnswer.objects.filter(question=question).count() == before


def test_marking_a_judgement_wrong_needs_the_right_to_edit_and_csrf(
    question: Question, instructor, alice, author_without_change
) -> None:
    url = reverse("admin:questions_question_judgement", args=[question.pk])
    data = {"text": "Anything at all.", "expected_key_points": [], "next": "https://evil.example/"}
    client = Client()
    client.force_login(alice)  # not staff: sent to the login page
    assert client.post(url, data).status_code == 302
    client.force_login(author_without_change)
    assert client.post(url, data).status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(instructor)
    assert strict.post(url, data).status_code == 403
    assert not ExampleAnswer.objects.filter(text="Anything at all.").exists()
    client.force_login(instructor)
    response = client.post(url, data)  # kept, and never sent to another site
    assert response["Location"] == reverse("admin:questions_question_validate", args=[question.pk])
    assert client.get(url).status_code == 405


def test_validate_shows_the_cross_validated_figure_only_for_a_question_read_by_meaning(
    client: Client, instructor, question: Question
) -> None:
    client.force_login(instructor)
    winner = Question.objects.get(slug="does-the-scale-change-the-winner")
    response = client.get(reverse("admin:questions_question_validate", args=[winner.pk]))
    figure = response.context["cross_validation"]
    assert figure is not None and figure.n >= 20
    assert 'id="cross-validation-heading"' in response.content.decode()
    # Every item of this one has patterns: the figure would only repeat Validate's own.
    response = client.get(reverse("admin:questions_question_validate", args=[question.pk]))
    assert response.context["cross_validation"] is None
    assert 'id="cross-validation-heading"' not in response.content.decode()


def test_known_wrong_answers_are_checked_by_kind(question: Question) -> None:
    from questions.models import KNOWN_WRONG_NOT_A_NUMBER, KNOWN_WRONG_NOT_A_WRONG_CHOICE, FollowUp

    choice = FollowUp(
        question=question,
        prompt="Which?",
        expected_answer="A",
        check_kind="choice",
        choices=["A", "B"],
        correct_choice="A",
        known_wrong={"B": "why B is wrong"},
    )
    choice.clean()
    choice.known_wrong = {"A": "the right one"}
    with pytest.raises(ValidationError, match=KNOWN_WRONG_NOT_A_WRONG_CHOICE):
        choice.clean()
    number = FollowUp(
        question=question,
        prompt="How many?",
        expected_answer="64",
        check_kind="number",
        expected_number=64,
        known_wrong={"five hundred": "d_model"},
    )
    with pytest.raises(ValidationError, match=KNOWN_WRONG_NOT_A_NUMBER):
        number.clean()
