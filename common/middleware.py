"""Site-wide request guards: a body-size cap that answers early, Permissions-Policy, and no
caching of personal responses."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control

MSG_BODY_TOO_LARGE = "The request body is larger than {limit} KiB."


class BodySizeLimitMiddleware:
    """413 from the Content-Length, before anything reads the body.

    Django's DATA_UPLOAD_MAX_MEMORY_SIZE guards request.POST and request.body, but DRF's
    parsers read the stream themselves, so a 200 MB POST to the API was read in full. A body
    without a Content-Length is never read by Django's WSGI handler (its stream is empty).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.REQUEST_BODY_MAX_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            message = MSG_BODY_TOO_LARGE.format(limit=limit // 1024)
            response: HttpResponse
            if request.path.startswith("/api/"):
                response = JsonResponse({"detail": message}, status=413)
            else:
                response = HttpResponse(message, status=413, content_type="text/plain")
            # No "Connection: close" here: it is a hop-by-hop header, which a WSGI app may not
            # set (wsgiref, under runserver, turns it into a 500); the server decides.
            return response
        return self.get_response(request)


class PermissionsPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Permissions-Policy", settings.PERMISSIONS_POLICY)
        return response


# A response that is someone's own must never be kept by a browser's disk cache or a shared
# proxy: the next person at the computer, or behind the proxy, would be shown it.
PRIVATE_CACHE_CONTROL = {"private": True, "no_store": True}


class PrivateCacheMiddleware:
    """``Cache-Control: private, no-store`` on every personal response.

    Personal: any API response (its caller may be identified by a token, and the schema and
    docs are cheap), any response to a signed-in user, and any response that sets the session
    or CSRF cookie (a cache would hand that cookie to the next visitor). Anonymous pages that
    set no cookie keep their headers, so what is the same for every visitor can still be
    cached. Placed outside the session and CSRF middleware, so it sees the cookies they set.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self._is_personal(request, response):
            patch_cache_control(response, **PRIVATE_CACHE_CONTROL)
        return response

    @staticmethod
    def _is_personal(request: HttpRequest, response: HttpResponse) -> bool:
        if request.path.startswith("/api/"):
            return True
        cookies = (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME)
        if any(name in response.cookies for name in cookies):
            return True
        # Only a request with a session cookie can be signed in to a page; not asking the
        # others spares a cookie-less first visit the session lookup.
        if settings.SESSION_COOKIE_NAME not in request.COOKIES:
            return False
        user = getattr(request, "user", None)
        return bool(user is not None and user.is_authenticated)
