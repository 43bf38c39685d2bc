"""LTI Dynamic Registration (IMS LTI-DR 1.0, which Canvas and Moodle 3.10+ offer): the platform
opens the tool's registration URL with its OpenID configuration and a one-time token; the tool
registers itself there and records the platform.

A registration made this way starts inactive (and its deployment too): anyone can point the
registration URL at a configuration of their own, so a tool administrator activates it in the
admin before any launch from it is accepted. Built here rather than on
django-lti-dynamic-registration 0.1.2, whose success page is an inline script (refused by the
CSP), whose generic message type cannot be serialised, and whose requests have no timeout."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from lti_tool.models import LtiDeployment, LtiRegistration

from lti.errors import LtiRefused
from lti.services import PLATFORM_TIMEOUT_SECONDS, USER_AGENT

MSG_REGISTRATION_INVALID = "The registration request of the platform is incomplete or not valid."
MSG_REGISTRATION_REFUSED = "The platform refused the registration: {error}"

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
)
_REQUIRED = (
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "jwks_uri",
    "registration_endpoint",
)


def _headers(token: str) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def platform_configuration_fetch(*, url: str, token: str) -> dict[str, object]:
    """The platform's OpenID configuration, checked to come from its own issuer."""
    try:
        response = requests.get(url, headers=_headers(token), timeout=PLATFORM_TIMEOUT_SECONDS)
        response.raise_for_status()
        config = response.json()
    except (requests.RequestException, ValueError) as error:
        raise LtiRefused(MSG_REGISTRATION_REFUSED.format(error=error), status=400) from error
    if not isinstance(config, dict) or any(not config.get(key) for key in _REQUIRED):
        raise LtiRefused(MSG_REGISTRATION_INVALID, status=400)
    issuer = urlsplit(str(config["issuer"]))
    where = urlsplit(url)
    if (issuer.scheme, issuer.netloc) != (where.scheme, where.netloc):
        raise LtiRefused(MSG_REGISTRATION_INVALID, status=400)
    return config


def dynamic_registration_run(
    *, openid_configuration_url: str, registration_token: str, base_url: str
) -> LtiRegistration:
    """Register this tool with the platform; the platform recorded here, inactive."""
    config = platform_configuration_fetch(url=openid_configuration_url, token=registration_token)
    base = base_url.rstrip("/")
    launch_url = base + reverse("lti:launch")
    registration = LtiRegistration.objects.create(
        name=f"{config['issuer']} (dynamic registration)"[:255],
        issuer=str(config["issuer"]),
        client_id=f"pending-{uuid.uuid4()}",
        auth_url=str(config["authorization_endpoint"]),
        token_url=str(config["token_endpoint"]),
        keyset_url=str(config["jwks_uri"]),
        is_active=False,
    )
    payload = {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": base
        + reverse("lti:login", kwargs={"registration_uuid": registration.uuid}),
        "redirect_uris": [launch_url],
        "client_name": settings.PRODUCT_NAME,
        "jwks_uri": base + reverse("lti:jwks"),
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIGURATION: {
            "domain": urlsplit(base).netloc,
            "target_link_uri": launch_url,
            "claims": ["iss", "sub", "name", "given_name", "family_name"],
            "messages": [
                {
                    "type": "LtiDeepLinkingRequest",
                    "target_link_uri": launch_url,
                    "label": "Add an exercise or a question",
                }
            ],
        },
    }
    try:
        response = requests.post(
            str(config["registration_endpoint"]),
            json=payload,
            headers=_headers(registration_token),
            timeout=PLATFORM_TIMEOUT_SECONDS,
        )
        response.raise_for_status()
        answer = response.json()
        client_id = str(answer["client_id"])
    except (requests.RequestException, ValueError, KeyError) as error:
        registration.delete()
        text = getattr(getattr(error, "response", None), "text", "") or str(error)
        raise LtiRefused(MSG_REGISTRATION_REFUSED.format(error=text[:500]), status=400) from error
    deployment_id = (answer.get(TOOL_CONFIGURATION) or {}).get("deployment_id")
    with transaction.atomic():
        registration.client_id = client_id
        registration.save(update_fields=["client_id", "datetime_modified"])
        if deployment_id:
            LtiDeployment.objects.create(
                registration=registration, deployment_id=str(deployment_id), is_active=False
            )
    return registration
