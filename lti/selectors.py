"""Reads for LTI: the registered platforms' origins (who may frame launched pages), the URLs
a platform's administrator types in, failed passbacks an instructor should see."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db.models import Case, QuerySet, When
from django.urls import reverse
from lti_tool.models import LtiRegistration

from lti.models import GradeSync


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def platform_origins() -> list[str]:
    """Origins of the active registrations' pages (issuer and login page): the frame ancestors
    allowed on launched pages."""
    origins: set[str] = set()
    for issuer, auth_url in LtiRegistration.objects.active().values_list("issuer", "auth_url"):
        origins.update(o for o in (_origin(issuer), _origin(auth_url)) if o)
    return sorted(origins)


def tool_urls(*, registration: LtiRegistration, base_url: str) -> dict[str, str]:
    """What a platform's administrator enters when registering this tool."""
    base = base_url.rstrip("/")
    return {
        "OIDC login (initiation) URL": base
        + reverse("lti:login", kwargs={"registration_uuid": registration.uuid}),
        "Target link / redirect URL": base + reverse("lti:launch"),
        "Deep linking URL": base + reverse("lti:launch"),
        "Public key set (JWKS) URL": base + reverse("lti:jwks"),
        "Dynamic registration URL (any platform)": base + reverse("lti:register"),
    }


def grade_syncs_of(*, course_id: int) -> QuerySet[GradeSync]:
    """A course's passbacks, failures first, for its staff."""
    failed_first = Case(When(status=GradeSync.Status.FAILED, then=0), default=1)
    return (
        GradeSync.objects.filter(assignment__course_id=course_id)
        .select_related("assignment", "user")
        .order_by(failed_first, "-updated_at")
    )
