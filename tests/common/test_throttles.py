"""Every API endpoint is throttled per caller, in counters every web process shares."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.mark.usefixtures("rate_window")
def test_anonymous_api_calls_are_throttled_with_429(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "anon": "3/min"}
    client = APIClient()
    codes = [client.get("/api/questions/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


@pytest.mark.usefixtures("rate_window")
def test_a_changing_forwarded_header_buys_no_fresh_limit(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "anon": "3/min"}
    client = APIClient()
    codes = [
        client.get("/api/questions/", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
        for i in range(6)
    ]
    assert codes == [200, 200, 200, 429, 429, 429]


@pytest.mark.usefixtures("rate_window")
def test_behind_one_proxy_the_address_it_saw_counts(settings) -> None:
    settings.NUM_PROXIES = 1
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "anon": "2/min"}
    client = APIClient()

    def get(forwarded: str) -> int:
        return client.get("/api/questions/", HTTP_X_FORWARDED_FOR=forwarded).status_code

    # The client writes the first entries; our proxy appends the address it saw, last.
    assert [get(f"6.6.6.{i}, 203.0.113.7") for i in range(3)] == [200, 200, 429]
    assert get("203.0.113.8") == 200  # another client behind the same proxy
