"""The error responses every API operation can give, added to the OpenAPI schema.

drf-spectacular documents each view's success; the errors come from layers every view shares
(authentication, throttles, the body cap, the parsers, validation), so they are added here
once, in the shapes DRF and common.middleware really send.
"""

from __future__ import annotations

from typing import Any

# A text field as the API accepts it: no NUL character (DRF refuses them, as PostgreSQL does)
# and not only whitespace (blank after trimming). Anchored: a schema pattern is a search.
TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL_PATTERN = r"^[^\x00]*$"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "`detail` for a request-wide error; otherwise one list of messages per field.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
}
_ERRORS = {
    "400": "The input is not valid (a field, a query parameter or the JSON itself).",
    "401": "Missing or invalid credentials (a token, or a session).",
    "403": "Signed in, but not allowed (or a session request without its CSRF token).",
    "404": "No such object, or not one of yours.",
    "413": "The request body is larger than REQUEST_BODY_MAX_BYTES.",
    "429": "Over a rate limit; retry after the `Retry-After` seconds.",
}
_HEADERS = {
    "401": {"WWW-Authenticate": {"schema": {"type": "string"}, "description": "`Token`"}},
    "429": {"Retry-After": {"schema": {"type": "string"}, "description": "Seconds to wait."}},
}


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """POSTPROCESSING_HOOKS entry: document the shared error responses on every operation."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            errors = dict(_ERRORS)
            if "requestBody" in operation:
                errors["415"] = "The body's Content-Type is not one this operation accepts."
            for code, description in errors.items():
                response = responses.setdefault(code, {"description": description})
                response.setdefault("content", {"application/json": {"schema": ref}})
                if code in _HEADERS:
                    response.setdefault("headers", _HEADERS[code])
            for code, response in responses.items():
                if code.startswith("4"):  # a view's own 4xx (e.g. 409): the same body shape
                    response.setdefault("content", {"application/json": {"schema": ref}})
    return result
