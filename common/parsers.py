"""The API's JSON parser, with a bound on nesting depth, for every view whatever it lists."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.request import Request

MSG_JSON_TOO_DEEP = "JSON nested deeper than {depth} levels."


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether value nests lists and objects more than limit deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class BoundedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.JSON_MAX_DEPTH
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:  # deeper than the interpreter's stack: far too deep
            raise ParseError(MSG_JSON_TOO_DEEP.format(depth=limit)) from exc
        if json_depth_exceeds(data, limit):
            raise ParseError(MSG_JSON_TOO_DEEP.format(depth=limit))
        return data


class BoundedContentNegotiation(DefaultContentNegotiation):
    """Parse JSON with BoundedJSONParser on every view, whatever its ``parser_classes``.

    DEFAULT_PARSER_CLASSES covers the views that keep the default, but a view may list its own
    parsers, and third-party views do (the token view listed DRF's plain JSONParser, where a
    deeply nested body was a RecursionError and a 500). Every view asks the negotiation class
    of the settings which parser reads a body, so swapping any other JSON parser here holds
    for views not written yet, and for whichever view serves a URL.
    """

    def select_parser(self, request: Request, parsers: Any) -> BaseParser | None:
        parser = super().select_parser(request, parsers)
        if isinstance(parser, JSONParser) and not isinstance(parser, BoundedJSONParser):
            return BoundedJSONParser()
        return parser
