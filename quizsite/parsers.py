"""The API's JSON parser, with a bound on nesting depth."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

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
