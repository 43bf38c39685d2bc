"""The staff forms of a course. Times are typed in the course's time zone (the views activate
it), stored in UTC."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from courses.models import MSG_EXTENSION_EMPTY, Membership

MSG_EXTENSION_BOTH = "Give a new due time or extra days, not both."
CSV_UPLOAD_MAX_BYTES = 256 * 1024

DATETIME_INPUT = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class StudentChoice(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: AbstractBaseUser) -> str:
        return obj.get_username()


class ExtensionForm(forms.Form):
    users = StudentChoice(
        queryset=None,  # set per course
        widget=forms.CheckboxSelectMultiple,
        label="Students",
        help_text="One student, or a group: each gets the same extension.",
    )
    due_at = forms.DateTimeField(
        required=False,
        widget=DATETIME_INPUT,
        label="New due time",
        help_text="In the course's time zone.",
    )
    extra_days = forms.IntegerField(
        required=False, min_value=1, max_value=365, label="Or extra days"
    )
    note = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Note"
    )

    def __init__(self, *args: Any, students: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["users"].queryset = students

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("due_at") and data.get("extra_days"):
            raise forms.ValidationError(MSG_EXTENSION_BOTH)
        if not data.get("due_at") and not data.get("extra_days"):
            raise forms.ValidationError(MSG_EXTENSION_EMPTY)
        return data


class OverrideForm(forms.Form):
    score = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        widget=forms.NumberInput(attrs={"step": "0.01"}),
        help_text="Between 0 and 1.",
    )
    comment = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to the student with the score.",
    )


class EnrolForm(forms.Form):
    names = forms.CharField(
        required=False,
        max_length=CSV_UPLOAD_MAX_BYTES,
        widget=forms.Textarea(attrs={"rows": 5}),
        label="Emails or usernames",
        help_text="One a line (or the first column of a CSV).",
    )
    file = forms.FileField(required=False, label="Or a CSV file")
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.STUDENT)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        text = data.get("names") or ""
        if upload is not None:
            if upload.size > CSV_UPLOAD_MAX_BYTES:
                raise forms.ValidationError("The file is too large.")
            text += "\n" + upload.read().decode("utf-8-sig", errors="replace")
        data["text"] = text
        return data
