"""A small but strict LTI 1.3 platform for tests, served on 127.0.0.1 from a thread.

It signs launches (resource link and deep linking) with its own key, serves its key set, runs
the OIDC authorisation step (client id, redirect URI, login hint and message hint checked),
issues service tokens for a client-credentials grant whose JWT assertion it verifies strictly
against the tool's key set (signature, iss = sub = client id, aud = token URL, exp, jti never
reused, scopes granted), and serves line items' scores and a context's memberships to bearers of
a token with the matching scope. A deep-linking answer is verified the same way (iss, aud,
deployment, nonce, data). What the tool sends is kept for the test to assert on.
"""

from __future__ import annotations

import html
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
ALLOWED_SCOPES = {SCOPE_SCORE, SCOPE_LINEITEM, SCOPE_NRPS, f"{SCOPE_LINEITEM}.readonly"}
ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
ROLE_LEARNER = ROLE + "Learner"
ROLE_INSTRUCTOR = ROLE + "Instructor"
ROLE_TA = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
ACTIVITY = {"Initialized", "Started", "InProgress", "Submitted", "Completed"}
GRADING = {"FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"}


def _key() -> tuple[Any, dict[str, Any]]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_jwk = json.loads(RSAAlgorithm.to_jwk(private.public_key()))
    public_jwk.update(kid=uuid.uuid4().hex, alg="RS256", use="sig")
    return private, public_jwk


@dataclass
class Score:
    line_item: str
    body: dict[str, Any]


@dataclass
class Platform:
    client_id: str = "tool-client-1"
    deployment_id: str = "deployment-1"
    tool_launch_url: str = ""
    tool_jwks_url: str = ""
    context_id: str = "course-101"
    context_title: str = "Attention 101"
    members: list[dict[str, Any]] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    deep_link_items: list[dict[str, Any]] = field(default_factory=list)
    # Queued answers for the scores endpoint: (status, text) given instead of accepting.
    score_failures: list[tuple[int, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # The name its URLs use: the tool's, so both are one site and the launch's cookies (SameSite
    # Lax on plain HTTP) reach the tool from inside the platform's iframe.
    host: str = "127.0.0.1"
    # Dynamic registration: the one-time token the platform hands the tool, and what it got.
    registration_token: str = "registration-token-1"
    registered: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.private_key, self.public_jwk = _key()
        self._pending: dict[str, dict[str, Any]] = {}
        self._tokens: dict[str, set[str]] = {}
        self._jtis: set[str] = set()
        self._dl_nonces: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- serving ----------------------------------------------------------------------------

    def start(self) -> Platform:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                platform._handle(self, "GET")

            def do_POST(self) -> None:
                platform._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def auth_url(self) -> str:
        return self.url + "/auth"

    @property
    def token_url(self) -> str:
        return self.url + "/token"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    def line_item_url(self, name: str) -> str:
        return f"{self.url}/lineitems/{name}"

    @property
    def memberships_url(self) -> str:
        return f"{self.url}/contexts/{self.context_id}/memberships"

    # --- launches ---------------------------------------------------------------------------

    def launch_prepare(
        self,
        *,
        sub: str,
        roles: list[str],
        resource_link_id: str = "link-1",
        line_item: str | None = "item-1",
        deep_linking: bool = False,
        custom: dict[str, str] | None = None,
        document_target: str = "iframe",
        tamper: dict[str, Any] | None = None,
        sign_with: Any = None,
    ) -> str:
        """A message hint for the next launch of this user; `tamper` overrides claims (None
        deletes one) and `sign_with` signs with another key, to forge a launch."""
        hint = uuid.uuid4().hex
        self._pending[hint] = {
            "sub": sub,
            "roles": roles,
            "resource_link_id": resource_link_id,
            "line_item": line_item,
            "deep_linking": deep_linking,
            "custom": custom or {},
            "document_target": document_target,
            "tamper": tamper or {},
            "sign_with": sign_with,
        }
        return hint

    def login_params(self, hint: str, *, target: str | None = None) -> dict[str, str]:
        """What the platform sends to the tool's OIDC login URL."""
        return {
            "iss": self.issuer,
            "login_hint": self._pending[hint]["sub"],
            "target_link_uri": target or self.tool_launch_url,
            "lti_message_hint": hint,
            "client_id": self.client_id,
            "lti_deployment_id": self.deployment_id,
        }

    def authorize(self, params: dict[str, str]) -> tuple[str, dict[str, str]]:
        """The OIDC authorisation step: (where to post, the form) or ValueError."""
        required = ("scope", "response_type", "client_id", "redirect_uri", "login_hint", "state")
        missing = [name for name in required if not params.get(name)]
        if missing:
            raise ValueError(f"missing {missing}")
        if params["scope"] != "openid" or params["response_type"] != "id_token":
            raise ValueError("scope must be openid and response_type id_token")
        if params.get("response_mode") != "form_post" or params.get("prompt") != "none":
            raise ValueError("response_mode must be form_post and prompt none")
        if params["client_id"] != self.client_id:
            raise ValueError("unknown client_id")
        if params["redirect_uri"] != self.tool_launch_url:
            raise ValueError(f"redirect_uri not registered: {params['redirect_uri']}")
        pending = self._pending.pop(params.get("lti_message_hint", ""), None)
        if pending is None or pending["sub"] != params["login_hint"]:
            raise ValueError("unknown lti_message_hint or login_hint")
        if not params.get("nonce"):
            raise ValueError("missing nonce")
        token = self._id_token(pending, nonce=params["nonce"])
        return params["redirect_uri"], {"id_token": token, "state": params["state"]}

    def _id_token(self, pending: dict[str, Any], *, nonce: str) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "sub": pending["sub"],
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "name": f"User {pending['sub']}",
            "given_name": "User",
            "family_name": pending["sub"],
            "email": f"{pending['sub']}@platform.example",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": self.deployment_id,
            LTI + "roles": pending["roles"],
            LTI + "context": {
                "id": self.context_id,
                "title": self.context_title,
                "label": "ATT101",
                "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
            },
            LTI + "tool_platform": {"guid": "platform-guid-1", "name": "Test platform"},
            LTI + "launch_presentation": {"document_target": pending["document_target"]},
            NRPS: {
                "context_memberships_url": self.memberships_url,
                "service_versions": ["2.0"],
            },
        }
        if pending["deep_linking"]:
            claims[LTI + "message_type"] = "LtiDeepLinkingRequest"
            claims[DL + "deep_linking_settings"] = {
                "deep_link_return_url": self.url + "/deep-link-return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": False,
                "data": "platform-opaque-data",
            }
            claims[LTI + "target_link_uri"] = self.tool_launch_url
        else:
            claims[LTI + "message_type"] = "LtiResourceLinkRequest"
            claims[LTI + "target_link_uri"] = self.tool_launch_url
            claims[LTI + "resource_link"] = {"id": pending["resource_link_id"], "title": "Link"}
            if pending["custom"]:
                claims[LTI + "custom"] = pending["custom"]
        ags: dict[str, Any] = {
            "scope": [SCOPE_SCORE, SCOPE_LINEITEM],
            "lineitems": self.url + "/lineitems",
        }
        if pending["line_item"] and not pending["deep_linking"]:
            ags["lineitem"] = self.line_item_url(pending["line_item"])
        claims[AGS] = ags
        for name, value in pending["tamper"].items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        key = pending["sign_with"] or self.private_key
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": self.public_jwk["kid"]})

    # --- what the tool signs ----------------------------------------------------------------

    def _tool_key(self, token: str) -> Any:
        keys = requests.get(self.tool_jwks_url, timeout=10).json()["keys"]
        kid = jwt.get_unverified_header(token).get("kid")
        candidates = [k for k in keys if kid is None or k.get("kid") == kid]
        if not candidates:
            raise ValueError("no tool key with that kid")
        last: Exception | None = None
        for candidate in candidates:
            try:
                public = RSAAlgorithm.from_jwk(json.dumps(candidate))
                jwt.decode(token, public, algorithms=["RS256"], options={"verify_aud": False})
                return public
            except jwt.InvalidTokenError as error:
                last = error
        raise ValueError(f"tool signature not valid: {last}")

    def _token_grant(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        if form.get("client_assertion_type") != (
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        ):
            return 400, {"error": "invalid_client", "error_description": "assertion type"}
        assertion = form.get("client_assertion", "")
        try:
            public = self._tool_key(assertion)
            claims = jwt.decode(
                assertion,
                public,
                algorithms=["RS256"],
                audience=self.token_url,
                issuer=self.client_id,
                options={"require": ["iss", "sub", "aud", "exp", "iat", "jti"]},
            )
        except (ValueError, jwt.InvalidTokenError) as error:
            return 401, {"error": "invalid_client", "error_description": str(error)}
        if claims["sub"] != self.client_id:
            return 401, {"error": "invalid_client", "error_description": "sub is not the client"}
        with self._lock:
            if claims["jti"] in self._jtis:
                return 401, {"error": "invalid_client", "error_description": "jti replayed"}
            self._jtis.add(claims["jti"])
        scopes = set(form.get("scope", "").split())
        if not scopes or not scopes <= ALLOWED_SCOPES:
            return 400, {"error": "invalid_scope"}
        access = uuid.uuid4().hex
        self._tokens[access] = scopes
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "scope": " ".join(sorted(scopes)),
        }

    def _bearer_scopes(self, handler: BaseHTTPRequestHandler) -> set[str] | None:
        auth = handler.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return None
        return self._tokens.get(auth.removeprefix("Bearer "))

    def _score(
        self, line_item: str, handler: BaseHTTPRequestHandler, raw: bytes
    ) -> tuple[int, Any]:
        scopes = self._bearer_scopes(handler)
        if scopes is None:
            return 401, {"error": "invalid_token"}
        if SCOPE_SCORE not in scopes:
            return 403, {"error": "insufficient_scope"}
        if handler.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
            return 415, {"error": "score media type expected"}
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"error": "not JSON"}
        problems = []
        if not isinstance(body.get("userId"), str) or not body["userId"]:
            problems.append("userId")
        if body.get("activityProgress") not in ACTIVITY:
            problems.append("activityProgress")
        if body.get("gradingProgress") not in GRADING:
            problems.append("gradingProgress")
        if not isinstance(body.get("timestamp"), str):
            problems.append("timestamp")
        given, maximum = body.get("scoreGiven"), body.get("scoreMaximum")
        if given is not None and (
            not isinstance(given, (int, float))
            or not isinstance(maximum, (int, float))
            or maximum <= 0
            or given < 0
        ):
            problems.append("scoreGiven/scoreMaximum")
        if problems:
            return 400, {"error": f"invalid score: {problems}"}
        with self._lock:
            if self.score_failures:
                status, text = self.score_failures.pop(0)
                return status, {"error": text}
            self.scores.append(Score(line_item=line_item, body=body))
        return 204, None

    def _memberships(self, handler: BaseHTTPRequestHandler) -> tuple[int, Any]:
        scopes = self._bearer_scopes(handler)
        if scopes is None:
            return 401, {"error": "invalid_token"}
        if SCOPE_NRPS not in scopes:
            return 403, {"error": "insufficient_scope"}
        return 200, {
            "id": self.memberships_url,
            "context": {"id": self.context_id, "title": self.context_title},
            "members": self.members,
        }

    def _deep_link_return(self, form: dict[str, str]) -> tuple[int, str]:
        token = form.get("JWT", "")
        try:
            public = self._tool_key(token)
            claims = jwt.decode(
                token,
                public,
                algorithms=["RS256"],
                audience=self.issuer,
                issuer=self.client_id,
                options={"require": ["iss", "aud", "exp", "iat", "nonce"]},
            )
        except (ValueError, jwt.InvalidTokenError) as error:
            return 400, f"refused: {error}"
        if claims.get(LTI + "deployment_id") != self.deployment_id:
            return 400, "refused: deployment"
        if claims.get(LTI + "message_type") != "LtiDeepLinkingResponse":
            return 400, "refused: message type"
        if claims.get(DL + "data") != "platform-opaque-data":
            return 400, "refused: data not echoed"
        with self._lock:
            if claims["nonce"] in self._dl_nonces:
                return 400, "refused: nonce replayed"
            self._dl_nonces.add(claims["nonce"])
            self.deep_link_items.extend(claims.get(DL + "content_items", []))
        return 200, f"<h1>Added {len(claims.get(DL + 'content_items', []))} item(s)</h1>"

    # --- dynamic registration --------------------------------------------------------------

    @property
    def openid_configuration_url(self) -> str:
        return self.url + "/.well-known/openid-configuration"

    def _openid_configuration(self, handler: BaseHTTPRequestHandler) -> tuple[int, Any]:
        if handler.headers.get("Authorization") != f"Bearer {self.registration_token}":
            return 401, {"error": "registration token expected"}
        return 200, {
            "issuer": self.issuer,
            "authorization_endpoint": self.auth_url,
            "token_endpoint": self.token_url,
            "jwks_uri": self.jwks_url,
            "registration_endpoint": self.url + "/register",
            "scopes_supported": sorted(ALLOWED_SCOPES | {"openid"}),
            "response_types_supported": ["id_token"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "test-platform",
                "version": "1.0",
                "messages_supported": [
                    {"type": "LtiResourceLinkRequest"},
                    {"type": "LtiDeepLinkingRequest"},
                ],
            },
        }

    def _register(self, handler: BaseHTTPRequestHandler, raw: bytes) -> tuple[int, Any]:
        if handler.headers.get("Authorization") != f"Bearer {self.registration_token}":
            return 401, {"error": "registration token expected"}
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"error": "not JSON"}
        problems = [
            name
            for name, ok in (
                ("redirect_uris", self.tool_launch_url in body.get("redirect_uris", [])),
                ("initiate_login_uri", str(body.get("initiate_login_uri", "")).startswith("http")),
                ("jwks_uri", str(body.get("jwks_uri", "")).startswith("http")),
                (
                    "token_endpoint_auth_method",
                    body.get("token_endpoint_auth_method") == "private_key_jwt",
                ),
                (
                    "scope",
                    set(str(body.get("scope", "")).split())
                    <= ALLOWED_SCOPES
                    | {"https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"},
                ),
                (
                    "tool configuration",
                    "https://purl.imsglobal.org/spec/lti-tool-configuration" in body,
                ),
            )
            if not ok
        ]
        if problems:
            return 400, {"error": f"invalid registration: {problems}"}
        # The token is spent: a second registration with it is refused.
        self.registration_token = uuid.uuid4().hex
        self.registered.append(body)
        return 200, {
            **body,
            "client_id": self.client_id,
            "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                **body["https://purl.imsglobal.org/spec/lti-tool-configuration"],
                "deployment_id": self.deployment_id,
            },
        }

    # --- the HTTP side ----------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        split = urlsplit(handler.path)
        path = split.path
        raw = b""
        if method == "POST":
            raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        form = {k: v[0] for k, v in parse_qs(split.query).items()}
        if method == "POST" and "json" not in (handler.headers.get("Content-Type") or ""):
            form.update({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        try:
            if path == "/.well-known/openid-configuration":
                return self._json(handler, *self._openid_configuration(handler))
            if path == "/register" and method == "POST":
                return self._json(handler, *self._register(handler, raw))
            if path == "/jwks":
                return self._json(handler, 200, {"keys": [self.public_jwk]})
            if path == "/auth":
                try:
                    action, fields = self.authorize(form)
                except ValueError as error:
                    self.errors.append(str(error))
                    return self._html(
                        handler, 400, f"<h1>Refused</h1><p>{html.escape(str(error))}</p>"
                    )
                inputs = "".join(
                    f'<input type="hidden" name="{k}" value="{html.escape(v)}">'
                    for k, v in fields.items()
                )
                page = (
                    f'<form id="f" method="post" action="{html.escape(action)}">{inputs}'
                    '<button type="submit">Continue</button></form>'
                    "<script>document.getElementById('f').submit()</script>"
                )
                return self._html(handler, 200, page)
            if path == "/token" and method == "POST":
                status, body = self._token_grant(form)
                return self._json(handler, status, body)
            if path.startswith("/lineitems/") and path.endswith("/scores") and method == "POST":
                name = path.removeprefix("/lineitems/").removesuffix("/scores")
                status, body = self._score(name, handler, raw)
                return self._json(handler, status, body)
            if path == urlsplit(self.memberships_url).path:
                status, body = self._memberships(handler)
                return self._json(
                    handler,
                    status,
                    body,
                    "application/vnd.ims.lti-nrps.v2.membershipcontainer+json",
                )
            if path == "/deep-link-return" and method == "POST":
                status, page = self._deep_link_return(form)
                return self._html(handler, status, page)
            if path.startswith("/course/"):
                # The platform's course page: the tool's login in an iframe (or a new window).
                hint = path.removeprefix("/course/")
                login = form.get("login", "")
                src = html.escape(f"{login}?{urlencode(self.login_params(hint))}")
                return self._html(
                    handler,
                    200,
                    f'<h1>Platform course</h1><iframe id="tool" title="Tool" src="{src}" '
                    'width="1000" height="700"></iframe>',
                )
            return self._json(handler, 404, {"error": "not found"})
        except Exception as error:  # a platform bug shows in the test, not as a hang
            self.errors.append(repr(error))
            return self._json(handler, 500, {"error": repr(error)})

    @staticmethod
    def _json(
        handler: BaseHTTPRequestHandler, status: int, body: Any, ctype: str = "application/json"
    ) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        handler.send_response(status)
        if data:
            handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _html(handler: BaseHTTPRequestHandler, status: int, page: str) -> None:
        head = "<!doctype html><html lang='en'><title>Platform</title>"
        document = f"{head}<body>{page}</body></html>"
        data = document.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
