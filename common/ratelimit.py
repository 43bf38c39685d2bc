"""One rate limit per (action, caller), shared by every web process through the cache.

Pages and the API call the same function with the same scope, so a limit holds whatever the
path (form or API). Counters live in the default cache (Redis in production), so two gunicorn
workers count together; ``cache.add`` then ``cache.incr`` is atomic there, unlike a
read-modify-write of a list of timestamps.
"""

from __future__ import annotations

import ipaddress
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest

log = logging.getLogger(__name__)

_PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


def rate_parse(rate: str) -> Rate:
    """'20/min' -> Rate(20, 60). Raises ValueError on anything else."""
    count, _, period = rate.partition("/")
    return Rate(count=int(count), seconds=_PERIODS[period.strip().lower()])


def client_ip(request: HttpRequest) -> str:
    """The caller's address: REMOTE_ADDR, or the one NUM_PROXIES trusted proxies saw.

    X-Forwarded-For is whatever the client typed, except for the entries our own proxies
    appended; with NUM_PROXIES = 0 (the default) it is ignored altogether, so a changing header
    cannot buy a fresh limit.
    """
    meta = getattr(request, "META", {})
    proxies = settings.NUM_PROXIES
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    if proxies > 0 and forwarded:
        hops = [h.strip() for h in forwarded.split(",") if h.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return meta.get("REMOTE_ADDR", "") or "unknown"


def axes_client_ip(request: HttpRequest) -> str | None:
    """client_ip for django-axes, which stores it in a GenericIPAddressField: None unless it
    is an address (PostgreSQL refuses "unknown" there, so a request without REMOTE_ADDR,
    such as the test client's force_login, made every login fail)."""
    address = client_ip(request)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return None
    return address


def rate_limit_hit(*, scope: str, ident: str, rate: str | None) -> float | None:
    """Count one request; return the seconds to wait if over the limit, else None.

    A fixed window per (scope, ident): simple, atomic, and at most twice the rate across a
    window boundary, which is what a brute-force or flood limit needs.
    """
    if not rate:
        return None
    limit = rate_parse(rate)
    now = time.time()
    window = int(now // limit.seconds)
    key = f"rl:{scope}:{ident}:{window}"
    try:
        count = _count(key, timeout=limit.seconds + 1)
    except Exception:  # the cache is down: serve (and say so) rather than refuse everyone
        log.warning("rate limit %s not counted: the cache is unavailable", scope, exc_info=True)
        return None
    if count > limit.count:
        return max(1.0, (window + 1) * limit.seconds - now)
    return None


# INCR, and EXPIRE NX on the window's first hit, as one atomic command: the MULTI of the two
# built a pipeline (a client object of its own) at each call, for a third of what a limit cost.
_COUNT_SCRIPT = (
    "local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1], 'NX') return n"
)

# Django's Redis cache builds a new client (and its tables of response callbacks) at every
# call; one per cache client is enough, as it is thread-safe and shares the pool. Kept with
# it: the counting script, registered on that client.
_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _redis_count_script(backend: RedisCache) -> Any:
    inner = backend._cache
    script = _clients.get(inner)
    if script is None:
        script = _clients[inner] = inner.get_client(write=True).register_script(_COUNT_SCRIPT)
    return script


def _count(key: str, *, timeout: int) -> int:
    """Add one to the counter ``key`` (created with ``timeout``); the new count."""
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        # One round trip, where the cache API takes three (SET NX, EXISTS, INCR), each with a
        # client of its own. Same key and value format as the cache API's.
        script = _redis_count_script(backend)
        return int(script(keys=[backend.make_and_validate_key(key)], args=[timeout]))
    # add() is a no-op when the key exists; incr() is atomic in LocMem too.
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def gap_claim(*, scope: str, ident: str, seconds: int) -> bool:
    """Claim the next ``seconds`` for (scope, ident): True if nothing held them, so the caller
    may act now; False while an earlier claim holds. One atomic add (SET NX with an expiry) in
    the shared cache, so two web processes never both win; fails open like the limits."""
    try:
        return bool(cache.add(f"gap:{scope}:{ident}", 1, timeout=seconds))
    except Exception:  # the cache is down: act (and say so) rather than never
        log.warning("gap %s not claimed: the cache is unavailable", scope, exc_info=True)
        return True
