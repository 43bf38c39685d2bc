"""A test-only urlconf that renders the explorable includes on bare pages.

Used by the end-to-end tests while (or instead of) the real explainer page: each include must
be self-contained, so a page with nothing but the include is the strictest host for it.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.urls import path

from quizsite.urls import urlpatterns as site_urlpatterns
from tests.explorables.sample_plots import sample_plots

PAGE = """{% load static %}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{ title }}</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="{% static 'css/site.css' %}"></head>
<body><main id="main"><h1>{{ title }}</h1>{{ body|safe }}</main></body></html>"""

INCLUDES = {
    "variance": "explorables/variance.html",
    "saturation": "explorables/saturation.html",
    "sqrt-vs-d": "explorables/sqrt_vs_d.html",
    "judges": "explorables/judges.html",
    "worked-example": "explorables/worked_example.html",
}


def _render(request: HttpRequest, title: str, body_source: str, context: dict) -> HttpResponse:
    engine = engines["django"]
    body = engine.from_string(body_source).render(context, request)
    page = engine.from_string(PAGE).render({"title": title, "body": body}, request)
    return HttpResponse(page)


def all_explorables(request: HttpRequest) -> HttpResponse:
    """Every include on one page: also checks that shared scripts load once and coexist."""
    source = "".join(f'{{% include "{t}" %}}' for t in INCLUDES.values())
    return _render(request, "All explorables", source, {})


def one_explorable(request: HttpRequest, name: str) -> HttpResponse:
    return _render(request, name, f'{{% include "{INCLUDES[name]}" %}}', {})


def submission_plots(request: HttpRequest, kind: str, code: str) -> HttpResponse:
    plots = sample_plots(kind, code)
    source = '{% include "explorables/submission_plots.html" %}'
    return _render(request, f"Submission plots: {kind}, {code}", source, {"plots": plots})


def submission_plots_partial(request: HttpRequest, kind: str, code: str) -> HttpResponse:
    """The include alone, as the result partial that htmx swaps in while polling."""
    source = '<div id="result">{% include "explorables/submission_plots.html" %}</div>'
    html = engines["django"].from_string(source).render({"plots": sample_plots(kind, code)})
    return HttpResponse(html)


HTMX_HOST = """{% load static %}<div id="result" hx-get="{{ url }}" hx-trigger="load delay:100ms"
hx-swap="outerHTML"><p>Running the hidden tests…</p></div>
<script defer src="{% static 'vendor/htmx/htmx.min.js' %}"></script>"""


def submission_plots_htmx(request: HttpRequest, kind: str, code: str) -> HttpResponse:
    """A page whose result arrives later through an htmx outerHTML swap, as on the site."""
    url = f"/xp-plots-partial/{kind}/{code}/"
    return _render(request, "Submission plots via htmx", HTMX_HOST, {"url": url})


urlpatterns = [
    path("xp/", all_explorables, name="xp-all"),
    path("xp/<str:name>/", one_explorable, name="xp-one"),
    path("xp-plots/<str:kind>/<str:code>/", submission_plots, name="xp-plots"),
    path("xp-plots-partial/<str:kind>/<str:code>/", submission_plots_partial),
    path("xp-plots-htmx/<str:kind>/<str:code>/", submission_plots_htmx),
    *site_urlpatterns,  # the real pages too, so one urlconf serves every test of the module
]
