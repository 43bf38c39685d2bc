"""The registration's admin page shows the URLs to enter in the platform; failed passbacks and
roster syncs are visible and can be run again from the admin."""

from __future__ import annotations

import pytest
from lti_tool.models import Key

from tests.lti.conftest import register
from tests.lti.platform import Platform

pytestmark = pytest.mark.django_db


def test_the_registration_page_shows_the_tool_urls(admin_client, platform: Platform) -> None:
    registration = register(platform)
    page = admin_client.get(f"/admin/lti_tool/ltiregistration/{registration.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for url in (
        f"http://testserver/lti/login/{registration.uuid}/",
        "http://testserver/lti/launch/",
        "http://testserver/lti/jwks/",
    ):
        assert f"<code>{url}</code>" in html
    assert "OIDC login (initiation) URL" in html


def test_the_tool_publishes_its_key_set(client, platform: Platform) -> None:
    register(platform)
    assert not Key.objects.exists()  # a fresh deployment: the first key is made on first need
    keys = client.get("/lti/jwks/").json()["keys"]
    assert len(keys) == 1 and keys[0]["alg"] == "RS256" and keys[0]["use"] == "sig"
    assert "d" not in keys[0]  # the public half only
    assert client.get("/lti/jwks/").json()["keys"] == keys  # and only once
