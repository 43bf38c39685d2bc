"""Creating courses and assignments in the admin; extensions and overrides are read here and
changed on the course's staff pages (which keep who and when, and tell the LTI grade sync)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.forms.utils import pretty_name
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from courses.models import Assignment, Course, Extension, Membership, ScoreOverride
from courses.services import membership_set
from courses.signals import score_changed_send


def _name_fields(form: forms.BaseForm, prefix: str = "") -> None:
    """Give each input its label as its accessible name: a tabular inline's row sits under
    column headings with no <label>, and a date-and-time field is two inputs under one."""
    for name, field in form.fields.items():
        label = str(field.label or pretty_name(name))
        widget = getattr(field.widget, "widget", field.widget)  # the admin's related wrapper
        parts = getattr(widget, "widgets", None)
        if parts:
            for part, what in zip(parts, ("date", "time"), strict=False):
                part.attrs.setdefault("aria-label", f"{prefix}{label} {what}")
        else:
            widget.attrs.setdefault("aria-label", f"{prefix}{label}")


class NamedRowsFormSet(forms.BaseInlineFormSet):
    """A tabular inline's formset whose rows (and their Delete boxes) have names."""

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        _name_fields(form)


class CourseTimeZoneMixin:
    """An existing object's times are shown and typed in its course's time zone, as on the
    course's pages (a new one's in the site's, UTC: its course is not chosen yet)."""

    def course_of(self, object_id: str) -> Course | None:
        raise NotImplementedError

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        course = self.course_of(object_id) if object_id and object_id.isdigit() else None
        zone = course.zone if course is not None else timezone.get_current_timezone()
        with timezone.override(zone):
            response = super().changeform_view(  # type: ignore[misc]
                request, object_id, form_url, extra_context
            )
            if isinstance(response, TemplateResponse):
                response.render()  # now, in the course's time zone (it renders lazily)
            return response


class MembershipInline(admin.TabularInline):
    model = Membership
    formset = NamedRowsFormSet
    extra = 1
    # A text box for the user's id (with the admin's lookup): a select of every account
    # would not scale, and the autocomplete widget has no accessible name.
    raw_id_fields = ("user",)
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)


class AssignmentInline(admin.TabularInline):
    model = Assignment
    formset = NamedRowsFormSet
    extra = 0
    fields = ("title", "exercise", "question", "opens_at", "due_at", "late_policy")
    show_change_link = True
    view_on_site = False


class AssignmentForm(forms.ModelForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _name_fields(self)


@admin.register(Course)
class CourseAdmin(CourseTimeZoneMixin, admin.ModelAdmin):
    list_display = ("title", "slug", "time_zone", "created_at")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    fields = ("title", "slug", "time_zone", "invite_enabled")
    inlines = (MembershipInline, AssignmentInline)

    def course_of(self, object_id: str) -> Course | None:
        return Course.objects.filter(pk=object_id).first()

    def save_model(self, request: HttpRequest, obj: Course, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        if not change:  # its creator teaches it
            membership_set(course=obj, user=request.user, role=Membership.Role.INSTRUCTOR)


@admin.register(Assignment)
class AssignmentAdmin(CourseTimeZoneMixin, admin.ModelAdmin):
    form = AssignmentForm

    def course_of(self, object_id: str) -> Course | None:
        return Course.objects.filter(assignments__pk=object_id).first()

    list_display = ("title", "course", "exercise", "question", "opens_at", "due_at", "late_policy")
    list_filter = ("course", "late_policy")
    search_fields = ("title", "course__title")
    fields = (
        "course",
        "title",
        "exercise",
        "question",
        "opens_at",
        "due_at",
        "late_policy",
        "penalty_per_day",
        "penalty_cap",
        "hard_deadline",
        "similarity_threshold",
    )

    def save_model(self, request: HttpRequest, obj: Assignment, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change:  # new dates or a new policy may change every student's score
            students = obj.course.memberships.filter(role=Membership.Role.STUDENT)
            for user_id in students.values_list("user_id", flat=True):
                score_changed_send(assignment_id=obj.pk, user_id=user_id)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Extension)
class ExtensionAdmin(ReadOnlyAdmin):
    list_display = ("assignment", "user", "due_at", "extra_days", "granted_by", "created_at")


@admin.register(ScoreOverride)
class ScoreOverrideAdmin(ReadOnlyAdmin):
    list_display = ("assignment", "user", "score", "created_by", "created_at")
