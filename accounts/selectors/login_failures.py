"""Failed logins as django-axes records them (one row per username, address and browser)."""

from __future__ import annotations

from datetime import datetime

from axes.models import AccessAttempt
from django.db.models import Sum


def login_failures_from_address(*, ip_address: str, since: datetime) -> int:
    """Failed logins from ``ip_address`` whose row was last touched at ``since`` or later,
    whatever the username: the measure of password spraying from one client."""
    total = AccessAttempt.objects.filter(ip_address=ip_address, attempt_time__gte=since).aggregate(
        n=Sum("failures_since_start")
    )["n"]
    return total or 0
