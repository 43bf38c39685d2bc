"""Validating a launch: django-lti's message launch with the checks it leaves out.

The library keeps a nonce usable for its whole lifetime (a replayed launch passes) and creates an
inactive deployment row for any deployment id it is shown; here the nonce is spent once, an
unknown or inactive deployment is refused, and nothing is written before every check passed."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpRequest
from lti_tool.models import LtiDeployment, LtiLaunch
from lti_tool.utils import DjangoToolConfig
from pylti1p3.contrib.django import DjangoCacheDataStorage
from pylti1p3.contrib.django.message_launch import DjangoMessageLaunch
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException

from lti.errors import (
    MSG_DEPLOYMENT_UNKNOWN,
    MSG_LAUNCH_INVALID,
    MSG_NONCE_INVALID,
    MSG_PLATFORM_UNKNOWN,
    MSG_STATE_INVALID,
    MSG_TOKEN_INVALID,
    LtiRefused,
)

# A spent nonce is remembered longer than any launch token lives (the platform's exp).
NONCE_SPENT_SECONDS = 2 * 60 * 60

# The library's messages, by what they mean for the person launching.
_REASONS: tuple[tuple[str, str], ...] = (
    ("Missing state param", MSG_STATE_INVALID),
    ("State not found", MSG_STATE_INVALID),
    ("Missing %s cookie", MSG_STATE_INVALID),
    ('"nonce" is empty', MSG_NONCE_INVALID),
    ("Invalid Nonce", MSG_NONCE_INVALID),
    ("Registration not found", MSG_PLATFORM_UNKNOWN),
    ("Client id not registered", MSG_PLATFORM_UNKNOWN),
    ('"iss" is empty', MSG_PLATFORM_UNKNOWN),
    ("Can't decode id_token", MSG_TOKEN_INVALID),
    ("Unable to find public key", MSG_TOKEN_INVALID),
    ("JWT KID not found", MSG_TOKEN_INVALID),
    ("Unable to find deployment", MSG_DEPLOYMENT_UNKNOWN),
)


class LaunchDataStorage(DjangoCacheDataStorage):
    """The library's cache storage without its session cookie: on HTTPS it would key launches by
    a cookie that a browser blocking third-party cookies never sends to the frame. A launch is
    found by its random id, which only the signed token of a framed page carries."""

    def get_session_cookie_name(self) -> str | None:
        return None


class StrictToolConfig(DjangoToolConfig):
    """Finds only registered, active deployments (the library would create one)."""

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        return self._deployment(
            registration__issuer=iss,
            registration__uuid=self.registration_uuid,
            deployment_id=deployment_id,
        )

    def find_deployment_by_params(  # type: ignore[override]
        self, iss: str, deployment_id: str, client_id: str, *args: object, **kwargs: object
    ) -> Deployment | None:
        lookups = {
            "registration__issuer": iss,
            "registration__client_id": client_id,
            "deployment_id": deployment_id,
        }
        if self.registration_uuid is not None:
            lookups["registration__uuid"] = self.registration_uuid
        return self._deployment(**lookups)

    def _deployment(self, **lookups: object) -> Deployment | None:
        row = (
            LtiDeployment.objects.filter(is_active=True, registration__is_active=True)
            .filter(**lookups)
            .first()
        )
        if row is None:
            return None
        self.deployment = row
        return Deployment().set_deployment_id(row.deployment_id)


def _reason(error: LtiException) -> str:
    text = str(error)
    for start, message in _REASONS:
        if text.startswith(start):
            return message
    return MSG_LAUNCH_INVALID


def launch_validate(*, request: HttpRequest) -> LtiLaunch:
    """The validated launch of a platform's POST, or LtiRefused saying why (nothing written)."""
    message_launch = DjangoMessageLaunch(
        request, StrictToolConfig(), launch_data_storage=LaunchDataStorage()
    )
    try:
        message_launch.validate()
    except LtiException as error:
        raise LtiRefused(_reason(error)) from error
    except (KeyError, TypeError, ValueError) as error:  # a body that is no LTI message at all
        raise LtiRefused(MSG_LAUNCH_INVALID, status=400) from error
    body = message_launch.get_launch_data()
    # Spent here, after the signature held: the library only checks that the nonce was issued.
    if not cache.add(f"lti-nonce-spent:{body['iss']}:{body['nonce']}", 1, NONCE_SPENT_SECONDS):
        raise LtiRefused(MSG_NONCE_INVALID)
    return LtiLaunch(message_launch)


def launch_restore(*, request: HttpRequest, launch_id: str) -> LtiLaunch | None:
    """A launch validated earlier in this session (deep linking answers it later)."""
    try:
        message_launch = DjangoMessageLaunch.from_cache(
            launch_id, request, StrictToolConfig(), launch_data_storage=LaunchDataStorage()
        )
    except LtiException:
        return None
    return LtiLaunch(message_launch)
