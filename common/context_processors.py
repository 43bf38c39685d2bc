"""Template context every page shares."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

# Pages that are themselves the way in: "log in" from them does not come back to them.
_ACCOUNT_PATHS = "/accounts/"


def product(request: HttpRequest) -> dict[str, str]:
    """The product's one name (settings.PRODUCT_NAME), for the header and every <title>, and
    the address the header's "Log in" and "Sign up" return to (validated where it is used)."""
    path = request.get_full_path() if hasattr(request, "path") else ""
    here = "" if not path or path.startswith(_ACCOUNT_PATHS) else path
    return {"PRODUCT_NAME": settings.PRODUCT_NAME, "account_next": here}
