"""The authoring forms of the admin: a question, its key points and wrong answers (patterns
checked when saved), its example answers, and a judgement marked wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.forms.utils import pretty_name
from django.utils.text import slugify

from questions import content_files
from questions.models import (
    ExampleAnswer,
    KeyPoint,
    Question,
    WrongAnswer,
)

MSG_KEY_POINT_OTHER_TARGET = (
    "These key points belong to another part of the question: {slugs}. An answer to the "
    "question itself expects the question's key points; an answer to a follow-up, that "
    "follow-up's."
)

MSG_NO_WRONG_ANSWER_ON_FOLLOW_UP = "Follow-ups have no wrong answers: leave it as none."

NO_WRONG_ANSWER_CHOICE = ("", "none: the answer states no wrong answer")

# The id of the help block that explains the lines of a patterns field (change_form.html).
PATTERNS_HELP_ID = "patterns-help"

# Symbols a title may hold that a slug would drop: kept as the word they stand for.
SLUG_WORDS = {"√": " sqrt ", "≈": " about ", "\u00d7": " x ", "→": " to "}


def _name_row_fields(form: forms.BaseForm) -> None:
    """Give each field of a tabular inline's row its label as its accessible name: the row's
    inputs sit under column headings, with no <label> of their own. Checkbox and radio groups
    keep their per-choice labels."""
    for name, field in form.fields.items():
        # The admin wraps a foreign key's select (with its add and change links).
        widget = getattr(field.widget, "widget", field.widget)
        if isinstance(widget, (forms.CheckboxSelectMultiple, forms.RadioSelect)):
            continue
        widget.attrs.setdefault("aria-label", str(field.label or pretty_name(name)))


class NamedRowsFormSet(forms.BaseInlineFormSet):
    """A tabular inline's formset whose Delete boxes are named too (added after the form)."""

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        _name_row_fields(form)


def question_slug(title: str) -> str:
    """A slug that keeps the meaning of the symbols slugify drops: "Why divide by √d_k"
    gives "why-divide-by-sqrt-d_k" (js/question_admin.js does the same as you type)."""
    for symbol, word in SLUG_WORDS.items():
        title = title.replace(symbol, word)
    return slugify(title)


class PatternsFormMixin:
    """A patterns field checked and expanded as the content files are: `@name` becomes the
    set's lines (an unknown one is an error naming it), every line must compile and be safe,
    and the error names the line."""

    cleaned_data: dict[str, Any]

    def clean_patterns(self) -> str:
        value = self.cleaned_data.get("patterns") or ""
        try:
            lines = content_files.patterns_expand(value, sets=content_files.pattern_sets())
        except content_files.PatternError as exc:
            raise ValidationError(str(exc)) from exc
        return "\n".join(lines)

    def _describe_patterns(self) -> None:
        field = self.fields.get("patterns")  # type: ignore[attr-defined]
        if field is not None:
            field.widget.attrs["aria-describedby"] = PATTERNS_HELP_ID
            field.widget.attrs.setdefault("rows", "3")
            field.widget.attrs.setdefault("cols", "30")


class KeyPointForm(PatternsFormMixin, forms.ModelForm):
    class Meta:
        model = KeyPoint
        fields = ("slug", "label", "patterns", "follow_up", "ordering")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _name_row_fields(self)
        self._describe_patterns()


class WrongAnswerForm(PatternsFormMixin, forms.ModelForm):
    class Meta:
        model = WrongAnswer
        fields = ("slug", "statement", "rebuttal", "patterns", "ordering")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._describe_patterns()


class QuestionForm(forms.ModelForm):
    """The slug may be left empty: it is made from the title, symbols kept as words."""

    class Meta:
        model = Question
        fields = (
            "title",
            "slug",
            "status",
            "roles",
            "level",
            "ordering",
            "prompt",
            "short_answer",
            "full_answer",
            "exercise_slugs",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "slug" in self.fields:
            self.fields["slug"].required = False

    def clean_slug(self) -> str:
        slug = self.cleaned_data.get("slug") or ""
        return slug or question_slug(self.data.get(self.add_prefix("title"), ""))


@dataclass(frozen=True)
class ExampleChoices:
    key_points: list[tuple[str, str]]
    wrong_answers: list[tuple[str, str]]
    # slug -> the follow-up id it belongs to (None: the question itself).
    key_point_targets: dict[str, int | None]


def example_choices(question: Question | None) -> ExampleChoices:
    """The choices of every example form of one question, read once per request: the
    inline builds twenty forms and an empty one from the same question instance."""
    if question is None or not question.pk:
        return ExampleChoices([], [NO_WRONG_ANSWER_CHOICE], {})
    cached = getattr(question, "example_choices", None)
    if cached is not None:
        return cached
    key_points = list(question.key_points.select_related("follow_up"))
    choices = ExampleChoices(
        key_points=[
            (
                kp.slug,
                kp.slug
                if kp.follow_up is None
                else f"{kp.slug} (follow-up {kp.follow_up.ordering + 1})",
            )
            for kp in key_points
        ],
        wrong_answers=[NO_WRONG_ANSWER_CHOICE]
        + [(wa.slug, wa.slug) for wa in question.wrong_answers.all()],
        key_point_targets={kp.slug: kp.follow_up_id for kp in key_points},
    )
    question.example_choices = choices  # type: ignore[attr-defined]
    return choices


class ExampleAnswerForm(forms.ModelForm):
    """Expected key points as checkboxes and the wrong answer as a choice, from the question's
    own (saved) key points and wrong answers: a typo in a slug cannot be stored."""

    expected_key_points = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Key points added in this edit appear here once it is saved.",
    )
    expected_wrong_answer = forms.ChoiceField(required=False, choices=[NO_WRONG_ANSWER_CHOICE])

    class Meta:
        model = ExampleAnswer
        fields = (
            "text",
            "follow_up",
            "expected_key_points",
            "expected_wrong_answer",
            "note",
            "ordering",
        )
        widgets = {"text": forms.Textarea(attrs={"rows": 3, "cols": 48})}

    def __init__(self, *args: Any, question: Question | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = example_choices(question)
        self.key_point_targets = choices.key_point_targets
        self.fields["expected_key_points"].choices = choices.key_points
        self.fields["expected_wrong_answer"].choices = choices.wrong_answers
        _name_row_fields(self)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        follow_up = data.get("follow_up")
        target = follow_up.pk if follow_up else None
        elsewhere = [
            slug
            for slug in data.get("expected_key_points") or []
            if self.key_point_targets.get(slug) != target
        ]
        if elsewhere:
            self.add_error(
                "expected_key_points",
                MSG_KEY_POINT_OTHER_TARGET.format(slugs=", ".join(elsewhere)),
            )
        if follow_up is not None and data.get("expected_wrong_answer"):
            self.add_error("expected_wrong_answer", MSG_NO_WRONG_ANSWER_ON_FOLLOW_UP)
        return data


class JudgementForm(forms.Form):
    """The labels an answer should have had, for a judgement marked wrong."""

    text = forms.CharField(required=False, strip=False, widget=forms.HiddenInput)
    example = forms.IntegerField(required=False, widget=forms.HiddenInput)
    follow_up = forms.IntegerField(required=False, widget=forms.HiddenInput)
    expected_key_points = forms.MultipleChoiceField(
        label="Key points it makes", required=False, widget=forms.CheckboxSelectMultiple
    )
    expected_wrong_answer = forms.ChoiceField(
        label="Wrong answer it states", required=False, choices=[NO_WRONG_ANSWER_CHOICE]
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, question: Question, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        choices = example_choices(question)
        self.key_point_targets = choices.key_point_targets
        self.fields["expected_key_points"].choices = choices.key_points
        self.fields["expected_wrong_answer"].choices = choices.wrong_answers

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        example = None
        if data.get("example"):
            example = self.question.example_answers.filter(pk=data["example"]).first()
            if example is None:
                raise ValidationError("That example answer belongs to another question.")
        follow_up = None
        if data.get("follow_up"):
            follow_up = self.question.follow_ups.filter(pk=data["follow_up"]).first()
        if example is not None:
            follow_up = example.follow_up
        elif not (data.get("text") or "").strip():
            raise ValidationError("There is no answer to keep.")
        target = follow_up.pk if follow_up else None
        elsewhere = [
            slug
            for slug in data.get("expected_key_points") or []
            if self.key_point_targets.get(slug) != target
        ]
        if elsewhere:
            raise ValidationError(MSG_KEY_POINT_OTHER_TARGET.format(slugs=", ".join(elsewhere)))
        if follow_up is not None and data.get("expected_wrong_answer"):
            raise ValidationError(MSG_NO_WRONG_ANSWER_ON_FOLLOW_UP)
        data["example_row"], data["follow_up_row"] = example, follow_up
        return data
