"""Creating courses and assignments in the admin; extensions and overrides are read here and
changed on the course's staff pages (which keep who and when, and tell the LTI grade sync)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from courses.models import Assignment, Course, Extension, Membership, ScoreOverride
from courses.services import membership_set
from courses.signals import score_changed_send


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ("user",)
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)


class AssignmentInline(admin.TabularInline):
    model = Assignment
    extra = 0
    fields = ("title", "exercise", "question", "opens_at", "due_at", "late_policy")
    show_change_link = True


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "time_zone", "created_at")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    fields = ("title", "slug", "time_zone", "invite_enabled")
    inlines = (MembershipInline, AssignmentInline)

    def save_model(self, request: HttpRequest, obj: Course, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        if not change:  # its creator teaches it
            membership_set(course=obj, user=request.user, role=Membership.Role.INSTRUCTOR)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
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
