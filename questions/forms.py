"""Plain forms: the pages work without JavaScript (POST, redirect, GET)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from questions.models import CheckKind, FollowUp, Level
from questions.selectors import role_list
from questions.services import ANSWER_EMPTY, ANSWER_MAX_CHARS, ANSWER_TOO_LONG, answer_text_clean


def _counted(attrs: dict[str, str]) -> dict[str, str]:
    """Attributes js/questions.js reads to show a counter and the cap message.

    No `maxlength`: a browser enforcing it cuts a pasted answer without a word, and the
    candidate's answer would be assessed on text they never see was dropped.
    """
    return {**attrs, "data-max-chars": str(ANSWER_MAX_CHARS), "data-cap-message": ANSWER_TOO_LONG}


class AnswerForm(forms.Form):
    # The cap is checked by answer_text_clean (after line endings are normalised, as the
    # counter counts them), so the form, the API and the command refuse the same texts.
    text = forms.CharField(
        label="Your answer",
        widget=forms.Textarea(attrs=_counted({"rows": "8"})),
        strip=False,
        error_messages={"required": ANSWER_EMPTY},
    )
    max_chars = ANSWER_MAX_CHARS
    cap_message = ANSWER_TOO_LONG

    def clean_text(self) -> str:
        try:
            return answer_text_clean(self.cleaned_data["text"])
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages[0]) from exc


class FollowUpAnswerForm(AnswerForm):
    """A text area, or radio buttons for a choice follow-up."""

    def __init__(self, *args: Any, follow_up: FollowUp, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", f"fu{follow_up.pk}")
        super().__init__(*args, **kwargs)
        field = self.fields["text"]
        field.label = "Your answer to this follow-up"
        if follow_up.check_kind == CheckKind.CHOICE:
            self.fields["text"] = forms.ChoiceField(
                label="Pick one",
                choices=[(c, c) for c in follow_up.choices],
                widget=forms.RadioSelect,
                error_messages={"required": ANSWER_EMPTY},
            )
        elif follow_up.check_kind in (CheckKind.NUMBER, CheckKind.SHAPE):
            field.widget = forms.TextInput(attrs={"autocomplete": "off"})
        else:
            field.widget = forms.Textarea(attrs=_counted({"rows": "4"}))


class QuestionFilterForm(forms.Form):
    role = forms.ChoiceField(label="Role", required=False)
    level = forms.ChoiceField(
        label="Level", required=False, choices=[("", "Any level"), *Level.choices]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [("", "Any role")] + [(r.slug, r.name) for r in role_list()]
