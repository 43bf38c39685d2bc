"""Authoring: a question with its follow-ups, wrong answers and key points on one page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import ForeignKey, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from questions import services
from questions.models import Attempt, FollowUp, KeyPoint, Page, Question, Role, Status, WrongAnswer


class FollowUpInline(admin.StackedInline):
    model = FollowUp
    extra = 0
    fields = (
        ("ordering", "level", "check_kind"),
        "prompt",
        "expected_answer",
        ("expected_number", "tolerance"),
        "expected_shape",
        ("choices", "correct_choice"),
    )


class WrongAnswerInline(admin.StackedInline):
    model = WrongAnswer
    extra = 0
    fields = (("slug", "ordering"), "statement", "rebuttal", "patterns")


class KeyPointInline(admin.TabularInline):
    model = KeyPoint
    extra = 0
    fields = ("slug", "label", "patterns", "follow_up", "ordering")

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        # Only this question's follow-ups make sense here.
        if db_field.name == "follow_up":
            object_id = request.resolver_match.kwargs.get("object_id")
            kwargs["queryset"] = FollowUp.objects.filter(question_id=object_id or 0)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "level", "status", "ordering", "preview_link")
    list_filter = ("status", "level", "roles")
    list_editable = ("ordering",)
    search_fields = ("title", "slug", "prompt")
    prepopulated_fields = {"slug": ("title",)}
    filter_horizontal = ("roles",)
    readonly_fields = ("preview_link",)
    fieldsets = (
        (None, {"fields": ("title", "slug", "status", "preview_link")}),
        ("Who and how hard", {"fields": ("roles", "level", "ordering")}),
        ("Content", {"fields": ("prompt", "short_answer", "full_answer", "exercise_slugs")}),
    )
    inlines = (FollowUpInline, WrongAnswerInline, KeyPointInline)
    actions = ("publish", "unpublish")

    def view_on_site(self, obj: Question) -> str:  # type: ignore[override]
        # "View on site" shows the preview, which also works for drafts.
        return reverse("questions:preview", kwargs={"slug": obj.slug})

    @admin.display(description="Preview")
    def preview_link(self, obj: Question) -> str:
        if not obj.pk:
            return "Save first to preview."
        url = reverse("questions:preview", kwargs={"slug": obj.slug})
        return format_html('<a href="{}" target="_blank" rel="noopener">Preview the page</a>', url)

    @admin.action(description="Publish the selected questions", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        count = 0
        for question in queryset.exclude(status=Status.PUBLISHED):
            services.question_publish(question=question)
            count += 1
        self.message_user(request, f"Published {count} question(s).", messages.SUCCESS)

    @admin.action(description="Unpublish (back to draft)", permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        count = 0
        for question in queryset.filter(status=Status.PUBLISHED):
            services.question_unpublish(question=question)
            count += 1
        self.message_user(request, f"Moved {count} question(s) back to draft.", messages.SUCCESS)


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "ordering")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "status", "updated")
    prepopulated_fields = {"slug": ("title",)}


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    """Read-only: attempts are the candidates' own records."""

    list_display = ("created", "user", "question", "follow_up", "score")
    list_filter = ("question",)
    list_select_related = ("user", "question", "follow_up")
    readonly_fields = (
        "user",
        "session_key",
        "question",
        "follow_up",
        "text",
        "assessment",
        "created",
    )

    @admin.display(description="Score")
    def score(self, obj: Attempt) -> object:
        return obj.assessment.get("score", obj.assessment.get("correct"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Attempt | None = None) -> bool:
        return False
