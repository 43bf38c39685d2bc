"""common.parsers: JSON deeper than JSON_MAX_DEPTH is a 400 on every API endpoint that
reads a body, whatever parsers its view lists (never a RecursionError and a 500)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.test import APIClient

from common.parsers import MSG_JSON_TOO_DEEP, BoundedContentNegotiation, json_depth_exceeds
from tests.factories import superuser_create

pytestmark = pytest.mark.django_db

BODY_METHODS = ("post", "put", "patch")
# A value for each URL parameter, by the route it is in: objects the seed content provides.
SLUGS = {"exercises": "scaled-dot-product-attention", "questions": "why-divide-before-softmax"}


def _api_routes(
    resolver: URLResolver | None = None, prefix: str = ""
) -> Iterator[tuple[str, object]]:
    """(route, view) of every Django REST framework view in the URL configuration."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _api_routes(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and getattr(entry.callback, "cls", None) is not None:
            yield prefix + str(entry.pattern), entry.callback


# A URL parameter, as path() writes it (<slug:slug>, <int:pk>) or as a router does ((?P<pk>...)).
_PARAMETER = re.compile(
    r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>|\(\?P<(?P<regex_name>\w+)>[^)]*\)"
)


def _concrete(route: str) -> tuple[str, bool]:
    """A path for the route, and whether it names one object by id (which may 404 first)."""
    path = route.lstrip("^").rstrip("$")
    slug = next((v for k, v in SLUGS.items() if f"/{k}/" in f"/{path}"), "unknown")
    by_id = False

    def fill(match: re.Match[str]) -> str:
        nonlocal by_id
        name = match.group("name") or match.group("regex_name")
        if name in ("pk", "id") or match.group("converter") == "int":
            by_id = True
            return "1"
        return slug

    return "/" + _PARAMETER.sub(fill, path), by_id


def _accepts(view: object, method: str) -> bool:
    actions = getattr(view, "actions", None)
    if actions is not None:
        return method in actions
    return hasattr(view.cls, method)  # type: ignore[attr-defined]


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


ROUTES = sorted(_api_routes(), key=lambda rv: rv[0])


def test_the_walk_finds_the_endpoints_that_read_a_body() -> None:
    routes = {route for route, view in ROUTES if any(_accepts(view, m) for m in BODY_METHODS)}
    for expected in ("api/token/", "api/attempts/", "api/exercises/<slug:slug>/run/"):
        assert expected in routes
    assert any("submissions" in r for r in routes)


@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "superuser"])
@pytest.mark.parametrize("depth", [25, 100_000], ids=["past-the-cap", "past-the-stack"])
def test_deep_json_is_refused_on_every_endpoint(settings, signed_in: bool, depth: int) -> None:
    assert depth > settings.JSON_MAX_DEPTH
    client = APIClient()
    if signed_in:
        client.force_authenticate(
            superuser_create(username="deep-root", password="pw-deep-root-123")
        )
    seen = []
    for route, view in ROUTES:
        path, has_pk = _concrete(route)
        for method in BODY_METHODS:
            response = getattr(client, method)(path, _deep(depth), content_type="application/json")
            code = response.status_code
            seen.append((route, method, code))
            assert code != 500, (route, method)
            if not _accepts(view, method):  # authentication may answer before the method
                assert code in (405, 401, 403), (route, method, code)
            elif signed_in and not has_pk:
                # Past authentication and permissions: the body is read, and refused.
                assert code == 400, (route, method, code, response.content[:200])
                detail = response.json()["detail"]
                assert detail == MSG_JSON_TOO_DEEP.format(depth=settings.JSON_MAX_DEPTH)
            else:
                assert code in (400, 401, 403, 404), (route, method, code)
    assert any(code == 400 for _, _, code in seen)


def test_a_view_listing_drfs_plain_json_parser_still_gets_the_bound() -> None:
    negotiation = BoundedContentNegotiation()

    class _Request:
        content_type = "application/json"

    chosen = negotiation.select_parser(_Request(), [JSONParser()])
    assert chosen is not None
    with pytest.raises(ParseError) as refused:
        chosen.parse(io.BytesIO(_deep(50).encode()), "application/json", {})
    assert str(refused.value.detail) == MSG_JSON_TOO_DEEP.format(depth=20)


def test_depth_is_measured_without_recursion() -> None:
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert json_depth_exceeds(deep, 20)
    assert not json_depth_exceeds({"a": [1, {"b": 2}]}, 3)
