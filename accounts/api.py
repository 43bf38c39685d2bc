"""The API's tokens: get one for a username and password, list yours, revoke one or all.

Thin: accounts.services.api_tokens does the work and raises ApiTokenError, mapped to its HTTP
status in ``_refused`` alone; accounts.selectors.api_tokens lists them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors.api_tokens import api_token_list
from accounts.services.api_tokens import (
    ApiTokenError,
    api_token_login,
    api_token_revoke,
    api_tokens_revoke_all,
)
from common.schema import NO_NUL_PATTERN, TEXT_PATTERN
from common.throttles import TokenRateThrottle


def _refused(error: ApiTokenError) -> Response:
    # A wrong password is a 401 with the scheme to use, as missing credentials are elsewhere.
    headers = {"WWW-Authenticate": "Token"} if error.status_code == 401 else None
    return Response({"detail": error.message}, status=error.status_code, headers=headers)


@extend_schema_field({"type": "string", "maxLength": 150, "pattern": TEXT_PATTERN})
class _UsernameField(serializers.CharField):
    pass


@extend_schema_field(
    {"type": "string", "minLength": 1, "maxLength": 128, "pattern": NO_NUL_PATTERN}
)
class _PasswordField(serializers.CharField):
    pass


class TokenRequestSerializer(serializers.Serializer):
    username = _UsernameField(max_length=150)
    password = _PasswordField(max_length=128, trim_whitespace=False)


class IssuedTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send it as `Authorization: Token <token>`.")
    prefix = serializers.CharField(help_text="Its first characters, as the token list shows.")
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(allow_null=True, help_text="It stops working then.")


class TokenSerializer(serializers.Serializer):
    """One of your tokens: never the token, only its first characters."""

    prefix = serializers.CharField(source="token_key", help_text="What the token starts with.")
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField(allow_null=True)
    current = serializers.SerializerMethodField(help_text="The token of this request.")

    def get_current(self, obj: Any) -> bool:
        auth = getattr(self.context.get("request"), "auth", None)
        return getattr(auth, "digest", None) == obj.digest


class RevokedSerializer(serializers.Serializer):
    revoked = serializers.IntegerField(help_text="How many tokens were revoked.")


class TokenCreateApi(APIView):
    """POST a username and password, get an API token (shown once) and its expiry.

    No session authentication here: the credentials are the authentication, so a browser's
    session cookie (and its CSRF rule) must not get in the way. Throttled per client on top of
    django-axes' lockouts (per account and per address), which see this login through
    authenticate().
    """

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    throttle_classes = [TokenRateThrottle]

    @extend_schema(request=TokenRequestSerializer, responses={200: IssuedTokenSerializer})
    def post(self, request: Request) -> Response:
        serializer = TokenRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            issued = api_token_login(request=request, **serializer.validated_data)
        except ApiTokenError as error:
            return _refused(error)
        return Response(IssuedTokenSerializer(issued).data)


class TokenListApi(APIView):
    """Your API tokens that still work, newest first."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: TokenSerializer(many=True)})
    def get(self, request: Request) -> Response:
        tokens = api_token_list(user=request.user)
        return Response(TokenSerializer(tokens, many=True, context={"request": request}).data)


class TokenRevokeApi(APIView):
    """Revoke one of your tokens, named by its prefix."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={204: None})
    def delete(self, request: Request, prefix: str) -> Response:
        try:
            api_token_revoke(user=request.user, prefix=prefix)
        except ApiTokenError as error:
            return _refused(error)
        return Response(status=204)


class TokenRevokeAllApi(APIView):
    """Revoke every one of your tokens (this request's too)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses={200: RevokedSerializer})
    def post(self, request: Request) -> Response:
        # No body is needed, but one that is sent must parse, as on every other endpoint (a
        # malformed or too deeply nested JSON body is a 400, not ignored).
        _ = request.data
        revoked = api_tokens_revoke_all(user_id=request.user.pk)
        return Response(RevokedSerializer({"revoked": revoked}).data)
