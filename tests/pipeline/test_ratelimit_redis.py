"""Rate limits on the real shared cache (Redis): one round trip per hit, the same counts."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.test import override_settings

from common.ratelimit import rate_limit_hit
from tests.pipeline.stack import REDIS_URL, Redis


@pytest.fixture
def redis_cache(redis_server: Redis):  # type: ignore[no-untyped-def]
    config = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "ratelimit-test",
        }
    }
    with override_settings(CACHES=config):
        caches["default"].clear()
        yield caches["default"]
        caches["default"].clear()


@pytest.mark.usefixtures("rate_window")
def test_a_limit_counts_in_redis_and_refuses_past_the_rate(redis_cache) -> None:  # type: ignore[no-untyped-def]
    waits = [rate_limit_hit(scope="t", ident="7", rate="3/min") for _ in range(5)]
    assert waits[:3] == [None, None, None]
    assert all(w is not None and 1.0 <= w <= 60.0 for w in waits[3:])


@pytest.mark.usefixtures("rate_window")
def test_the_counter_expires_and_reads_back_through_the_cache_api(redis_cache) -> None:  # type: ignore[no-untyped-def]
    rate_limit_hit(scope="t", ident="8", rate="3/min")
    rate_limit_hit(scope="t", ident="8", rate="3/min")
    keys = [k for k in redis_cache._cache.get_client().keys("*") if b":rl:t:8:" in k]
    assert len(keys) == 1
    client = redis_cache._cache.get_client()
    assert 0 < client.ttl(keys[0]) <= 61  # the window's length, set once
    # The same value format as cache.incr: the cache API reads the count back.
    name = keys[0].decode().split(":", 2)[2]
    assert redis_cache.get(name) == 2
