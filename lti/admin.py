"""The admin for LTI: a platform's registration shows the URLs to type into the platform;
failed score passbacks show the platform's error and can be sent again; a course's roster can
be synchronised on demand."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from lti_tool.admin import LtiRegistrationAdmin as LibraryRegistrationAdmin
from lti_tool.models import LtiRegistration

from lti import services
from lti.models import AssignmentLink, CourseContext, GradeSync
from lti.selectors import tool_urls

MSG_RESENT = "Sent again: {count} score(s) queued."
MSG_ROSTER_SYNCED = "{course}: {enrolled} enrolled, {skipped} skipped."
MSG_ROSTER_FAILED = "{course}: the platform answered: {error}"

admin.site.unregister(LtiRegistration)


@admin.register(LtiRegistration)
class LtiRegistrationAdmin(LibraryRegistrationAdmin):
    readonly_fields = ("tool_urls",)

    def get_fieldsets(self, request: HttpRequest, obj: LtiRegistration | None = None):  # type: ignore[no-untyped-def]
        fieldsets = list(super().get_fieldsets(request, obj))
        if obj is not None:
            fieldsets.insert(
                0,
                (
                    "This tool's URLs (enter them in the platform)",
                    {"fields": ["tool_urls"]},
                ),
            )
        return fieldsets

    @admin.display(description="Tool URLs")
    def tool_urls(self, obj: LtiRegistration) -> str:
        request = getattr(self, "_request", None)
        base = request.build_absolute_uri("/") if request is not None else "/"
        rows = tool_urls(registration=obj, base_url=base).items()
        return format_html(
            "<dl class='lti-urls'>{}</dl>",
            format_html_join("", "<dt>{}</dt><dd><code>{}</code></dd>", rows),
        )

    def get_form(self, request: HttpRequest, obj=None, change=False, **kwargs):  # type: ignore[no-untyped-def]
        self._request = request
        return super().get_form(request, obj, change, **kwargs)


@admin.register(GradeSync)
class GradeSyncAdmin(admin.ModelAdmin):
    list_display = (
        "assignment",
        "user",
        "status",
        "sent_score",
        "sent_at",
        "attempts",
        "last_error",
    )
    list_filter = ("status", "assignment__course")
    search_fields = ("user__username", "assignment__title")
    readonly_fields = [f.name for f in GradeSync._meta.fields]
    actions = ("resend",)

    @admin.action(description="Send the score again")
    def resend(self, request: HttpRequest, queryset: QuerySet[GradeSync]) -> None:
        count = 0
        for row in queryset:
            count += services.grade_sync_resend(grade_sync=row)
        self.message_user(request, MSG_RESENT.format(count=count), messages.SUCCESS)


@admin.register(CourseContext)
class CourseContextAdmin(admin.ModelAdmin):
    list_display = ("course", "context", "roster_synced_at", "roster_error")
    actions = ("roster_sync",)

    @admin.action(description="Synchronise the roster from the platform now")
    def roster_sync(self, request: HttpRequest, queryset: QuerySet[CourseContext]) -> None:
        for link in queryset:
            try:
                done = services.roster_sync(course_context_id=link.pk)
            except services.PLATFORM_ERRORS as error:
                self.message_user(
                    request,
                    MSG_ROSTER_FAILED.format(course=link.course, error=error),
                    messages.ERROR,
                )
                continue
            self.message_user(
                request,
                MSG_ROSTER_SYNCED.format(
                    course=link.course, enrolled=done.enrolled, skipped=done.skipped
                ),
                messages.SUCCESS,
            )


@admin.register(AssignmentLink)
class AssignmentLinkAdmin(admin.ModelAdmin):
    list_display = ("assignment", "resource_link", "line_item_url", "score_maximum")
