"""Site-wide request guards: a body-size cap that answers early, and Permissions-Policy."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

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
