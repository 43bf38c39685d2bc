"""The site's own pages: the home page, the favicon, and the error handlers, which answer JSON
under /api/ and the HTML pages elsewhere."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.templatetags.static import static
from django.views import defaults
from django.views.generic import RedirectView

MSG_SERVER_ERROR = "The server failed on our side, not yours. Please try again in a minute."


MSG_NOT_FOUND = "Not found."
MSG_BAD_REQUEST = "Bad request."
MSG_FORBIDDEN = "You do not have permission to perform this action."


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_SERVER_ERROR}, status=500)
    # Rendered without the request's context, as Django's own handler does (whatever broke
    # may be in a context processor); the product's name is the one thing the page needs.
    template = loader.get_template("500.html")
    return HttpResponseServerError(template.render({"PRODUCT_NAME": settings.PRODUCT_NAME}))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):  # a URL no route matches, e.g. /api/attempts/x/
        return JsonResponse({"detail": MSG_NOT_FOUND}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_BAD_REQUEST}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_FORBIDDEN}, status=403)
    return defaults.permission_denied(request, exception)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


class FaviconView(RedirectView):
    """/favicon.ico, which browsers ask for whatever the page links: the SVG icon. Temporary,
    as the icon's address carries its content hash in production and changes with it."""

    permanent = False

    def get_redirect_url(self, *args: Any, **kwargs: Any) -> str:
        return static("favicon.svg")
