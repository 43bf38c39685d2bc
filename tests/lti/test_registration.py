"""Dynamic registration with the test platform: the tool registers itself there and records the
platform, inactive until a tool administrator activates it; a bad configuration is refused."""

from __future__ import annotations

import pytest
from django.test import Client
from lti_tool.models import LtiDeployment, LtiRegistration

from lti import errors
from lti.registration import MSG_REGISTRATION_INVALID
from lti.views import MSG_REGISTERED
from tests.lti.conftest import launch_through
from tests.lti.platform import ROLE_LEARNER, Platform

pytestmark = pytest.mark.django_db


def test_the_tool_registers_itself_and_waits_for_activation(
    client: Client, platform: Platform
) -> None:
    token = platform.registration_token
    page = client.get(
        "/lti/register/",
        {"openid_configuration": platform.openid_configuration_url, "registration_token": token},
    )
    assert page.status_code == 200, page.content
    assert MSG_REGISTERED in page.content.decode()
    assert f"frame-ancestors {platform.url}" in page["Content-Security-Policy"]
    [sent] = platform.registered
    registration = LtiRegistration.objects.get()
    assert sent["initiate_login_uri"] == f"http://testserver/lti/login/{registration.uuid}/"
    assert sent["jwks_uri"] == "http://testserver/lti/jwks/"
    assert registration.client_id == platform.client_id and registration.issuer == platform.issuer
    assert registration.token_url == platform.token_url and not registration.is_active
    deployment = LtiDeployment.objects.get()
    assert deployment.deployment_id == platform.deployment_id and not deployment.is_active

    # Inactive: the launch is refused at its first step.
    hint = platform.launch_prepare(sub="s", roles=[ROLE_LEARNER])
    refused = Client().get(f"/lti/login/{registration.uuid}/", platform.login_params(hint))
    assert refused.status_code == 403
    assert errors.MSG_PLATFORM_UNKNOWN in refused.content.decode()
    # Activated by an administrator: the launch goes through.
    LtiRegistration.objects.update(is_active=True)
    LtiDeployment.objects.update(is_active=True)
    hint = platform.launch_prepare(sub="s", roles=[ROLE_LEARNER])
    accepted, _ = launch_through(Client(), platform, registration, hint)
    assert accepted.status_code == 200
    assert errors.MSG_NO_ASSIGNMENT in accepted.content.decode()


def test_a_refused_token_leaves_no_registration(client: Client, platform: Platform) -> None:
    page = client.get(
        "/lti/register/",
        {"openid_configuration": platform.openid_configuration_url, "registration_token": "x"},
    )
    assert page.status_code == 400
    assert not LtiRegistration.objects.exists()


def test_a_configuration_from_another_origin_is_refused(client: Client, platform: Platform) -> None:
    page = client.get("/lti/register/", {"openid_configuration": "ftp://elsewhere/config"})
    assert page.status_code == 400
    assert MSG_REGISTRATION_INVALID in page.content.decode()
    assert not LtiRegistration.objects.exists()
