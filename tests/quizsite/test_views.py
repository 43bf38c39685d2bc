"""quizsite.views and the pages every app shares: the favicon, one product name everywhere,
the 500 page, and KaTeX only on the pages with math."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles import finders
from django.test import Client, RequestFactory

from quizsite.views import server_error

pytestmark = pytest.mark.django_db

EXERCISE = "/exercises/scaled-dot-product-attention/"


# --- favicon and product name ------------------------------------------------------------------


def test_favicon_ico_answers_with_the_svg_icon() -> None:
    client = Client()
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("favicon.svg")
    svg = finders.find("favicon.svg")
    assert svg and Path(svg).read_text().startswith("<svg")
    page = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page


def test_one_product_name_everywhere(admin_client: Client) -> None:
    name = settings.PRODUCT_NAME
    for path in ("/", "/questions/", "/exercises/", "/accounts/login/", "/no-such-page/"):
        html = Client().get(path).content.decode()
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        assert title and title.group(1).strip().endswith(name), (path, title)
    assert f'class="brand" href="/">{name}</a>' in Client().get("/").content.decode()
    assert admin.site.site_header.startswith(name) and admin.site.site_title == name
    assert name in admin_client.get("/admin/").content.decode()
    assert settings.SPECTACULAR_SETTINGS["TITLE"].startswith(name)


def test_the_500_page_names_the_product() -> None:
    response = server_error(RequestFactory().get("/questions/"))
    assert response.status_code == 500
    assert settings.PRODUCT_NAME in response.content.decode()


# --- page weight -------------------------------------------------------------------------------

KATEX = "/static/vendor/katex/katex.min"


@pytest.mark.parametrize(
    # The home page's one formula is plain HTML: KaTeX would be 350 kB for it.
    "path",
    ["/", "/questions/", "/exercises/", "/accounts/login/", "/accounts/signup/"],
)
def test_pages_without_math_do_not_load_katex(path: str) -> None:
    html = Client().get(path).content.decode()
    assert KATEX not in html and "js/math.js" not in html


@pytest.mark.parametrize(
    "path",
    ["/explainer/", "/misconceptions/", "/questions/why-divide-before-softmax/", EXERCISE],
)
def test_pages_with_math_load_katex_once(path: str) -> None:
    html = Client().get(path).content.decode()
    assert html.count(f"{KATEX}.css") == 1 and html.count(f"{KATEX}.js") == 1
    assert html.count("js/math.js") == 1
