"""Authoring: exercises with their checks, limits and a Validate action; submissions read-only."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from grader.engine import limits as grading_limits
from grader.engine.checks import CHECKS, ParamsError, check_get
from grader.engine.checks import custom as custom_check
from grader.models import Exercise, ExerciseCheck, Regrade, RegradeNotice, Submission, TrialRun
from grader.selectors.exercises import exercise_validation_latest
from grader.services.exercises import exercise_validation_request

MSG_CHECK_WRONG_KIND = "The check “{name}” cannot judge a {kind} exercise."
MSG_VALIDATE_ONE = "Select exactly one exercise to validate."
MSG_VALIDATION_FAILED = "The validation failed on the worker, so there is no report: {error}"
MSG_VALIDATION_QUEUED = "Validation of “{title}” is queued; a worker runs it in the sandbox."


def _check_choices() -> list[tuple[str, str]]:
    return [
        (name, f"{name} ({', '.join(sorted(c.kinds))}): {c.label}") for name, c in CHECKS.items()
    ]


def _params_help() -> str:
    lines = []
    for name, check in CHECKS.items():
        schema = check.params_schema()
        defaults = ", ".join(
            f"{k}={'(required)' if v['default'] is None else json.dumps(v['default'])}"
            for k, v in schema.items()
        )
        lines.append(f"{name}: {defaults or 'no parameters'}")
    return "JSON object; omitted keys take their defaults. " + " | ".join(lines)


# The custom check's source has a box of its own: Python is unreadable inside a JSON string.
SOURCE_HELP = (
    "Only for the “custom” check (saved into its parameters as “source”). Define "
    "check(student, expected, *inputs): it is called once per hidden input with the student's "
    "output, the reference's output and the arguments the student's function got (numpy "
    "arrays and scalars), and returns True to pass or False to fail; the student then reads "
    "the “message” parameter ({what} names the input). It runs in a sandbox of its own with "
    "small fixed limits, sees no code, files or database, and only compiles here. If it "
    "raises, hits a limit or returns anything else, the grade is an internal error (never "
    "charged) and Validate shows the check as broken."
)
MSG_SOURCE_NOT_CUSTOM = "Only the “custom” check takes a source; clear it or choose “custom”."


class ExerciseCheckForm(forms.ModelForm):
    name = forms.ChoiceField(choices=_check_choices)
    source = forms.CharField(
        label="Custom check source",
        required=False,
        strip=False,
        max_length=grading_limits.CUSTOM_CHECK_SOURCE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80, "spellcheck": "false"}),
        help_text=SOURCE_HELP,
    )

    class Meta:
        model = ExerciseCheck
        fields = ("name", "label", "params", "weight", "visibility", "order")
        help_texts = {"params": _params_help()}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        params = self.instance.params if isinstance(self.instance.params, dict) else {}
        if self.instance.name == custom_check.NAME and "source" in params:
            # Shown once, in its own box; saving puts it back into the params.
            self.initial.setdefault("source", params["source"])
            self.initial["params"] = {k: v for k, v in params.items() if k != "source"}

    def clean_weight(self) -> float:
        weight = self.cleaned_data["weight"]
        if weight is None or weight < 0:
            raise ValidationError("The weight must be zero or more.")
        return weight

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        name = data.get("name")
        if not name:
            return data
        check = check_get(name)
        # Browsers send a textarea's lines ended by CRLF.
        source = (data.get("source") or "").replace("\r\n", "\n")
        if source.strip():
            if name != custom_check.NAME:
                self.add_error("source", MSG_SOURCE_NOT_CUSTOM)
            elif isinstance(data.get("params"), dict | None):
                data["params"] = {**(data.get("params") or {}), "source": source}
        try:
            check.clean_params(data.get("params") or {})
        except ParamsError as exc:
            for error in exc.errors:
                in_box = error.startswith("source:") and bool(source.strip())
                self.add_error("source" if in_box else "params", error)
        kind = getattr(self.instance.exercise, "kind", None) if self.instance.exercise_id else None
        parent_kind = getattr(self, "parent_kind", None) or kind
        if parent_kind and parent_kind not in check.kinds:
            self.add_error("name", MSG_CHECK_WRONG_KIND.format(name=name, kind=parent_kind))
        return data


class ExerciseCheckFormSet(forms.BaseInlineFormSet):
    def _construct_form(self, i: int, **kwargs: Any) -> forms.Form:
        form = super()._construct_form(i, **kwargs)
        # The kind may be changing in the same POST: judge the checks against the new one.
        form.parent_kind = self.data.get("kind") if self.is_bound else self.instance.kind
        return form


class ExerciseCheckInline(admin.StackedInline):
    """Each check's fields stacked: side by side, with the parameters' JSON and its help,
    Weight and Visibility sat past the edge of the form at 1280 px."""

    model = ExerciseCheck
    form = ExerciseCheckForm
    formset = ExerciseCheckFormSet
    extra = 0
    ordering = ("order", "id")


class ExerciseForm(forms.ModelForm):
    class Meta:
        model = Exercise
        fields = (
            "title",
            "slug",
            "kind",
            "entry_point",
            "question_slug",
            "statement",
            "starter_code",
            "reference_solution",
            "time_limit_seconds",
            "memory_limit_mb",
            "deadline",
            "is_published",
            "order",
        )
        help_texts = {
            "time_limit_seconds": (
                f"CPU seconds, clamped to {grading_limits.CPU_SECONDS.low:g} to "
                f"{grading_limits.CPU_SECONDS.high:g} (the wall clock gets twice this)."
            ),
            "memory_limit_mb": (
                f"Clamped to {grading_limits.MEMORY_MB.low:g} to "
                f"{grading_limits.MEMORY_MB.high:g} MB."
            ),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The admin's deadline is two inputs under one label, which names the first only.
        deadline = self.fields["deadline"].widget
        for widget, part in zip(getattr(deadline, "widgets", ()), ("date", "time"), strict=False):
            widget.attrs.setdefault("aria-label", f"Deadline {part}")

    def clean_time_limit_seconds(self) -> float:
        return grading_limits.CPU_SECONDS.clamp(self.cleaned_data["time_limit_seconds"])

    def clean_memory_limit_mb(self) -> int:
        return int(grading_limits.MEMORY_MB.clamp(self.cleaned_data["memory_limit_mb"]))


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    form = ExerciseForm
    inlines = (ExerciseCheckInline,)
    list_display = ("title", "slug", "kind", "entry_point", "is_published", "order", "deadline")
    list_filter = ("kind", "is_published")
    search_fields = ("slug", "title")
    prepopulated_fields = {"slug": ("title",)}
    actions = ("validate_action",)
    change_form_template = "admin/grader/exercise/change_form.html"
    fieldsets = (
        (None, {"fields": ("title", "slug", "kind", "entry_point", "question_slug")}),
        ("Contract shown to students", {"fields": ("statement", "starter_code")}),
        ("Never shown to students", {"fields": ("reference_solution",)}),
        (
            "Limits and publishing",
            {
                "fields": (
                    "time_limit_seconds",
                    "memory_limit_mb",
                    "deadline",
                    "is_published",
                    "order",
                )
            },
        ),
    )

    def get_urls(self) -> list:
        urls = [
            path(
                "<int:pk>/validate/",
                self.admin_site.admin_view(self.validate_view),
                name="grader_exercise_validate",
            )
        ]
        return urls + super().get_urls()

    @admin.action(description="Validate: run the reference and the known wrong implementations")
    def validate_action(
        self, request: HttpRequest, queryset: QuerySet[Exercise]
    ) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, MSG_VALIDATE_ONE, messages.WARNING)
            return None
        exercise = queryset.get()
        if not self.has_change_permission(request, exercise):
            raise PermissionDenied
        exercise_validation_request(exercise=exercise, user=request.user)
        url = reverse("admin:grader_exercise_validate", kwargs={"pk": exercise.pk})
        return HttpResponseRedirect(url)

    def validate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """GET shows the latest validation (refreshing until a worker has finished it); POST
        queues a new one for a worker, so no web host needs the sandbox (or root)."""
        exercise = get_object_or_404(Exercise, pk=pk)
        if not self.has_change_permission(request, exercise):
            raise PermissionDenied
        if request.method == "POST":
            exercise_validation_request(exercise=exercise, user=request.user)
            self.message_user(request, MSG_VALIDATION_QUEUED.format(title=exercise.title))
            return HttpResponseRedirect(request.path)
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET", "POST"])
        validation = exercise_validation_latest(exercise=exercise)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Validate “{exercise.title}”",
            "exercise": exercise,
            "opts": self.model._meta,
            "validation": validation,
            "report": validation.report if validation and validation.report else None,
            "error": MSG_VALIDATION_FAILED.format(error=validation.error)
            if validation and validation.status == validation.Status.FAILED
            else "",
        }
        return TemplateResponse(request, "admin/grader/exercise/validate.html", context)


class _ReadOnlyAdmin(admin.ModelAdmin):
    """A record the pipeline writes: instructors read it here, nobody edits it."""

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Submission)
class SubmissionAdmin(_ReadOnlyAdmin):
    """Submissions are the students' record: instructors read them, nobody edits them here."""

    list_display = ("id", "exercise", "user", "status", "score", "received_at", "attempts")
    list_filter = ("status", "exercise")
    search_fields = ("=id", "user__username", "exercise__slug", "code")
    date_hierarchy = "received_at"
    list_select_related = ("exercise", "user")


@admin.register(Regrade)
class RegradeAdmin(_ReadOnlyAdmin):
    list_display = ("id", "exercise", "total", "requested_by", "created_at")
    list_filter = ("exercise",)
    list_select_related = ("exercise", "requested_by")


@admin.register(RegradeNotice)
class RegradeNoticeAdmin(_ReadOnlyAdmin):
    list_display = (
        "submission",
        "user",
        "old_status",
        "old_score",
        "new_status",
        "new_score",
        "created_at",
        "seen_at",
    )
    list_filter = ("new_status",)
    search_fields = ("user__username", "=submission__id")
    list_select_related = ("submission__exercise", "user")


# Run before Submit: what students ran, read-only (never graded, never counted).
@admin.register(TrialRun)
class TrialRunAdmin(_ReadOnlyAdmin):
    list_display = ("id", "exercise", "user", "status", "created_at", "finished_at")
    list_filter = ("exercise", "status")
    search_fields = ("user__username",)
    list_select_related = ("exercise", "user")
