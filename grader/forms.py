"""Query-string and form input of the grader's pages, validated before any query sees it.

A NUL byte (PostgreSQL refuses it in text), a superscript digit (``str.isdigit`` accepts "²",
``int`` does not) or an id past 64 bits (SQLite overflows) is a 400, never a 500.
"""

from __future__ import annotations

from django import forms

from grader.engine.limits import CODE_MAX_BYTES
from grader.models import REGRADE_NOTICE_THRESHOLD, Submission

# Row ids are 64-bit signed integers in every database we run on.
ID_MAX = 2**63 - 1


class SubmitForm(forms.Form):
    # Django's CharField refuses NUL characters; the service checks emptiness and byte size
    # with the messages the API shares.
    code = forms.CharField(required=False, strip=False, max_length=CODE_MAX_BYTES)


class HistoryForm(forms.Form):
    a = forms.IntegerField(required=False, min_value=1, max_value=ID_MAX)
    b = forms.IntegerField(required=False, min_value=1, max_value=ID_MAX)
    page = forms.IntegerField(required=False, min_value=1, max_value=ID_MAX)


class StaffFilterForm(forms.Form):
    exercise = forms.SlugField(required=False)
    status = forms.ChoiceField(required=False, choices=[("", "All"), *Submission.Status.choices])
    user = forms.CharField(required=False, max_length=150)
    misconception = forms.SlugField(required=False, max_length=100)
    page = forms.IntegerField(required=False, min_value=1, max_value=ID_MAX)


class RegradeApplyForm(forms.Form):
    notice_threshold = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        initial=REGRADE_NOTICE_THRESHOLD,
        label="Announce score moves of at least",
        help_text=(
            "A smaller move (the status unchanged) is listed in the student's details of the "
            "regrade, not announced."
        ),
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )

    def clean_notice_threshold(self) -> float:
        value = self.cleaned_data.get("notice_threshold")
        return REGRADE_NOTICE_THRESHOLD if value is None else value
