"""{% regrade_notices exercise %}: the signed-in student's unseen regrade notices (of that
exercise, or all), one per exercise per regrade, each with a Dismiss button. A tag, so every
page that shows a student's work includes it with one line, whatever its view."""

from __future__ import annotations

from typing import Any

from django import template

from grader.models import Exercise
from grader.selectors.regrades import regrade_announcements_unseen

register = template.Library()

# A student rarely has more; the rest show once these are dismissed.
NOTICES_SHOWN = 10


@register.inclusion_tag("grader/_regrade_notices.html", takes_context=True)
def regrade_notices(context: template.Context, exercise: Exercise | None = None) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    notices = (
        regrade_announcements_unseen(user=user, exercise=exercise)[:NOTICES_SHOWN]
        if user is not None
        else []
    )
    return {
        "notices": notices,
        "next": request.get_full_path() if request is not None else "",
        "csrf_token": context.get("csrf_token"),
    }
