"""Every API endpoint is throttled per caller (settings.REST_FRAMEWORK)."""

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient
from rest_framework.throttling import AnonRateThrottle

pytestmark = pytest.mark.django_db


def test_anonymous_api_calls_are_throttled_with_429(monkeypatch: pytest.MonkeyPatch) -> None:
    cache.clear()
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/min", "user": None})
    client = APIClient()
    codes = [client.get("/api/questions/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    cache.clear()
