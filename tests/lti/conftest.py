"""Fixtures for the LTI tests: a running test platform registered with the tool."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.test import Client
from lti_tool.models import LtiDeployment, LtiRegistration

from tests.lti.platform import Platform

TEST_SERVER = "http://testserver"


@pytest.fixture
def platform() -> Iterator[Platform]:
    running = Platform().start()
    running.tool_launch_url = f"{TEST_SERVER}/lti/launch/"
    yield running
    running.stop()


def register(platform: Platform, *, deployment_active: bool = True) -> LtiRegistration:
    registration = LtiRegistration.objects.create(
        name="Test platform",
        issuer=platform.issuer,
        client_id=platform.client_id,
        auth_url=platform.auth_url,
        token_url=platform.token_url,
        keyset_url=platform.jwks_url,
    )
    LtiDeployment.objects.create(
        registration=registration, deployment_id=platform.deployment_id, is_active=deployment_active
    )
    return registration


@pytest.fixture
def registration(db: None, platform: Platform) -> LtiRegistration:
    return register(platform)


def launch_through(client: Client, platform: Platform, registration: LtiRegistration, hint: str):  # type: ignore[no-untyped-def]
    """The browser's part of a launch: the tool's login, the platform's authorisation, the
    form post back to the tool. Returns the tool's answer to that post (and the form)."""
    login = client.get(f"/lti/login/{registration.uuid}/", platform.login_params(hint))
    assert login.status_code == 302, login.content
    location = urlsplit(login["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == platform.auth_url
    action, form = platform.authorize(dict(parse_qsl(location.query)))
    return client.post(urlsplit(action).path, form), form


@pytest.fixture
def served_platform(live_server, platform: Platform) -> Platform:
    """The platform, able to fetch the tool's key set from a live server (service tokens and
    deep-linking answers are signed by the tool)."""
    platform.tool_jwks_url = f"{live_server.url}/lti/jwks/"
    return platform
