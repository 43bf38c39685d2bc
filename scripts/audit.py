"""Re-run the security audit of issue 12 against a running site: one probe per finding.

    .venv/bin/python scripts/audit.py [--base http://127.0.0.1:8000] [--no-fair-share]

The caller starts the site (web, Redis, a Celery worker for the fair-share probe) and runs this
with the site's environment (DATABASE_URL...): a local setup step (`manage.py shell`) creates
the accounts the probes need that the web can't make (a staff account without permissions,
fresh users with tokens), so the sign-up and token limits are left for their own probes. The
demo accounts (quizsite/management/commands/demo_accounts.py) must exist.

Prints PASS, FAIL or SKIP per finding with a one-line reason; exits 1 on any FAIL. Probes run
in an order that keeps one probe's limits from spending another's (the per-client limits are
shared by every probe, which all come from one address).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR = ("instructor", "instructor-demo-pass")
STUDENT = ("student", "student-demo-pass")
EXERCISE = "scaled-dot-product-attention"
QUESTION = "why-divide-before-softmax"
EXPLAINER_SLUG = "why-divide-by-sqrt-d"  # the page /explainer/ shows (questions.selectors)
CORRECT = (ROOT / "bench" / "correct_attention.py").read_text()
# A CPU burner, through the site's sandbox only: it spins until the sandbox's CPU limit.
BURNER = "def attention(Q, K, V, mask=None):\n    while True:\n        pass\n"
FINAL = {"passed", "failed", "error", "internal-error"}
LOOK_ALIKE = "\u0455tudent"  # a Cyrillic s

# Finding 1: saved as the explainer's lead; none may become a live attribute or script.
XSS_WITH_MATH = [
    '[first]($x" autofocus onfocus="alert(document.domain)" x="$)',
    '[t](https://example.com "$x" onmouseover="alert(1)$")',
    '![$x" onerror="alert(1)$]($y$)',
    "[a]($x' onclick='alert(1)$)",
    '<a href="$x" onclick="alert(1)$">raw</a>',
    '`$x" onclick="alert(1)$`',
    '$<img src=x onerror="alert(1)">$',
]
XSS_WITHOUT_MATH = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)></svg>",
    "[j](javascript:alert(1))",
    '<a href="javascript:alert(1)">j</a>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<details open ontoggle="alert(1)">x</details>',
]


# --- A small HTTP client: cookies by hand, no redirects followed ------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    text: str
    seconds: float

    def json(self) -> object:
        return json.loads(self.text)


@dataclass
class Client:
    """One browser (or API caller): its own cookies and CSRF token.

    Cookies are sent whatever their Secure flag: the site runs on plain HTTP here, with the
    production settings (DEBUG off), which mark its cookies Secure.
    """

    base: str
    token: str | None = None
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        *,
        form: dict[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
    ) -> Response:
        url = urllib.parse.urlsplit(self.base)
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout)
        sent = {"Connection": "close", **(headers or {})}
        if form is not None:
            body = urllib.parse.urlencode(form).encode()
            content_type = "application/x-www-form-urlencoded"
        if content_type:
            sent["Content-Type"] = content_type
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.token:
            sent["Authorization"] = f"Token {self.token}"
        if method != "GET" and "csrftoken" in self.cookies:
            sent.setdefault("X-CSRFToken", self.cookies["csrftoken"])
            sent.setdefault("Referer", self.base + path)
        started = time.monotonic()
        try:
            conn.request(method, path, body=body, headers=sent)
            raw = conn.getresponse()
            text = raw.read().decode(errors="replace")
        finally:
            conn.close()
        for cookie in raw.msg.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(cookie).items():
                self.cookies[name] = morsel.value
        headers_seen = {k.lower(): v for k, v in raw.getheaders()}
        return Response(raw.status, headers_seen, text, time.monotonic() - started)

    def get(self, path: str, **kw: object) -> Response:
        return self.request("GET", path, **kw)  # type: ignore[arg-type]

    def post(self, path: str, **kw: object) -> Response:
        return self.request("POST", path, **kw)  # type: ignore[arg-type]

    def api(self, method: str, path: str, payload: object | None = None) -> Response:
        body = json.dumps(payload).encode() if payload is not None else None
        return self.request(method, path, body=body, content_type="application/json")

    def csrf(self, path: str) -> str:
        """GET a page with a form; its CSRF token (the cookie is set on the way)."""
        page = self.get(path)
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        return match.group(1) if match else self.cookies.get("csrftoken", "")

    def login(self, username: str, password: str, *, path: str = "/accounts/login/") -> Response:
        token = self.csrf(path)
        return self.post(
            path,
            form={"username": username, "password": password, "csrfmiddlewaretoken": token},
        )


class FormFields(HTMLParser):
    """The fields of each <form method=post> on a page, with their current values."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, str]] = []
        self._form: dict[str, str] | None = None
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method", "").lower() == "post":
            self._form = {}
            self.forms.append(self._form)
        if self._form is None:
            return
        if tag == "option" and self._select and "selected" in a:
            self._form[self._select] = a.get("value", "")
        if "name" not in a:
            return
        if tag == "input" and a.get("type") not in ("submit", "checkbox", "button"):
            self._form[a["name"]] = a.get("value", "")
        elif tag == "textarea":
            self._textarea = a["name"]
            self._form[a["name"]] = ""
        elif tag == "select":
            self._select = a["name"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea and self._form is not None:
            self._form[self._textarea] += data


def form_fields(html: str) -> dict[str, str]:
    """The page's main form: the POST form with the most fields (not the header's logout)."""
    parser = FormFields()
    parser.feed(html)
    fields = max(parser.forms, key=len, default={})
    # A textarea's content starts after a newline Django writes there.
    return {k: v[1:] if v.startswith("\n") else v for k, v in fields.items()}


URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "data")


class LiveScript(HTMLParser):
    """What could run script in a page: event-handler attributes, javascript: URLs, inline
    <script>, frames and plugins."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            v = (value or "").strip().lower()
            if name.startswith("on") or name in ("autofocus", "srcdoc"):
                self.found.append(f"<{tag} {name}=...>")
            url = v.replace("\t", "").replace("\n", "")
            if name in URL_ATTRIBUTES and url.startswith(("javascript:", "data:text")):
                self.found.append(f"<{tag} {name}={v[:30]}>")
        if tag == "script" and not dict(attrs).get("src"):
            self.found.append("<script> inline")
        if tag in ("iframe", "object", "embed", "base", "frame"):
            self.found.append(f"<{tag}>")


def live_script(html: str) -> list[str]:
    parser = LiveScript()
    parser.feed(html)
    return parser.found


def fresh_minute(margin: float = 20) -> None:
    """The limits count in fixed one-minute windows, which let up to twice a limit through
    across a boundary: start a burst early in a window so it counts in one."""
    if time.time() % 60 > 60 - margin:
        time.sleep(60.5 - time.time() % 60)


# --- The audit ---------------------------------------------------------------------------------

SETUP = """
import json, secrets
from django.contrib.auth import get_user_model
from quizsite.services.api_tokens import api_token_issue
U = get_user_model()
tag = {tag!r}
out = {{}}
def make(name, staff=False):
    password = "Audit-" + secrets.token_hex(8)
    u, _ = U.objects.get_or_create(username=name)
    u.set_password(password)
    u.is_staff = staff
    u.save()
    u.groups.clear()
    u.user_permissions.clear()
    token = api_token_issue(user=u).token
    return {{"username": name, "password": password, "token": token}}
out["victim"] = make(f"audit-victim-{{tag}}")
out["staff"] = make(f"audit-staff-{{tag}}", staff=True)
out["burners"] = [make(f"audit-burner{{i}}-{{tag}}") for i in range(3)]
out["honest"] = make(f"audit-honest-{{tag}}")
student = U.objects.get(username="student")
out["student_token"] = api_token_issue(user=student).token
print(json.dumps(out))
"""


class Audit:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.results: list[tuple[str, str, str]] = []
        self.accounts: dict | None = None

    def client(self, token: str | None = None) -> Client:
        return Client(self.base, token=token)

    def report(self, finding: str, ok: bool | None, reason: str) -> None:
        verdict = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
        self.results.append((finding, verdict, reason))
        print(f"{verdict}  {finding}: {reason}", flush=True)

    def run(self, finding: str, probe: Callable[[], tuple[bool | None, str]]) -> None:
        try:
            ok, reason = probe()
        except LookupError as exc:  # what the probe needs is missing (the local setup)
            ok, reason = None, str(exc)
        except Exception as exc:  # a probe that breaks is a failure to show, not a crash
            ok, reason = False, f"probe error: {type(exc).__name__}: {exc}"
        self.report(finding, ok, reason)

    # Setup ---------------------------------------------------------------------------------

    def setup(self) -> None:
        code = SETUP.format(tag=secrets.token_hex(3))
        try:
            out = subprocess.run(  # noqa: S603 - our own manage.py and our own code
                [sys.executable, "manage.py", "shell", "-v", "0", "-c", code],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
            ).stdout
            self.accounts = json.loads(out.strip().splitlines()[-1])
        except (subprocess.SubprocessError, ValueError, IndexError) as exc:
            print(f"setup: no local accounts ({exc}); the probes needing them are skipped")

    def need_accounts(self) -> dict:
        if self.accounts is None:
            raise LookupError("no accounts from the local setup")
        return self.accounts

    # Probes, in the order they run ---------------------------------------------------------

    def csp_headers(self) -> tuple[bool, str]:
        problems = []
        for path in ("/", "/explainer/", "/questions/", "/accounts/login/", "/api/docs/"):
            r = self.client().get(path)
            csp = r.headers.get("content-security-policy", "")
            directives = {
                part.split()[0]: part.split()[1:] for part in csp.split(";") if part.split()
            }
            script = directives.get("script-src", directives.get("default-src"))
            if not csp or script is None:
                problems.append(f"{path}: no CSP script-src")
                continue
            loose = {"'unsafe-inline'", "'unsafe-eval'", "*", "data:", "http:", "https:"}
            if loose & set(script):
                problems.append(f"{path}: script-src {' '.join(script)}")
            for name, strict in (("object-src", "'none'"), ("base-uri", "'none'")):
                if directives.get(name) != [strict]:
                    problems.append(f"{path}: {name} {directives.get(name)}")
            if directives.get("frame-ancestors") not in (["'none'"], ["'self'"]):
                problems.append(f"{path}: frame-ancestors {directives.get('frame-ancestors')}")
            policy = r.headers.get("permissions-policy", "")
            for feature in ("camera=()", "microphone=()", "geolocation=()"):
                if feature not in policy:
                    problems.append(f"{path}: Permissions-Policy lacks {feature}")
        if problems:
            return False, "; ".join(problems[:4])
        return True, (
            "strict CSP (no inline/eval script, object/base none) and a deny-all "
            "Permissions-Policy on 5 pages"
        )

    def schema(self) -> tuple[bool, str]:
        anon = self.client()
        schema = anon.get("/api/schema/?format=json")
        paths = json.loads(schema.text).get("paths", {}) if schema.status == 200 else {}
        listing = anon.get("/api/exercises/")
        items = listing.json() if listing.status == 200 else None
        if isinstance(items, dict):
            items = items.get("results", [])
        leaked = [k for e in items or [] for k in e if k in ("reference", "checks", "solution")]
        unauth = anon.api("POST", "/api/submissions/", {"exercise": EXERCISE, "code": "x"})
        problems = []
        if "/api/exercises/" not in paths:
            problems.append(f"schema {schema.status} lacks /api/exercises/")
        if not items or leaked:
            problems.append(f"/api/exercises/ {listing.status}, leaked {leaked}")
        if unauth.status != 401 or "www-authenticate" not in unauth.headers:
            problems.append(f"no credentials: {unauth.status}")
        if problems:
            return False, "; ".join(problems)
        return True, (
            f"schema has /api/exercises/ ({len(items)} exercises, no reference or checks); "
            "missing credentials are 401 with WWW-Authenticate"
        )

    def _instructor(self) -> Client:
        c = self.client()
        r = c.login(*INSTRUCTOR, path="/admin/login/?next=/admin/")
        if r.status != 302:
            raise PermissionError(f"instructor login to the admin answered {r.status}")
        return c

    def xss(self) -> tuple[bool, str]:
        c = self._instructor()
        listing = c.get("/admin/questions/page/")
        change = None
        for pk in dict.fromkeys(re.findall(r"/admin/questions/page/(\d+)/change/", listing.text)):
            url = f"/admin/questions/page/{pk}/change/"
            fields = form_fields(c.get(url).text)
            if fields.get("slug") == EXPLAINER_SLUG:
                change = (url, fields)
                break
        if change is None:
            return False, "no explainer page in the admin"
        url, fields = change
        baseline = set(live_script(self.client().get("/explainer/").text))
        original = fields["lead"]
        marker = f"audit-{secrets.token_hex(4)}"  # proves the lead was saved and shown
        results = {}
        try:
            sets = (("with math", XSS_WITH_MATH), ("without math", XSS_WITHOUT_MATH))
            for label, vectors in sets:
                token = c.csrf(url)
                saved = c.post(
                    url,
                    form={
                        **fields,
                        "lead": "\n\n".join([marker, *vectors]),
                        "csrfmiddlewaretoken": token,
                        "_save": "Save",
                    },
                )
                if saved.status != 302:
                    return False, f"saving the lead {label} answered {saved.status}"
                page = self.client().get("/explainer/")
                if marker not in page.text:
                    return False, f"the saved lead ({label}) is not on /explainer/"
                results[label] = [f for f in live_script(page.text) if f not in baseline]
        finally:
            token = c.csrf(url)
            c.post(url, form={**fields, "lead": original, "csrfmiddlewaretoken": token})
        live = {k: v for k, v in results.items() if v}
        if live:
            return False, f"live script in /explainer/: {live}"
        n = len(XSS_WITH_MATH) + len(XSS_WITHOUT_MATH)
        return True, (
            f"{n} vectors saved as the explainer lead (math in links, titles, alts, code "
            "spans; raw HTML) render inert"
        )

    def validate_is_post(self) -> tuple[bool, str]:
        c = self._instructor()
        listing = c.get("/admin/grader/exercise/")
        pk = re.search(r"/admin/grader/exercise/(\d+)/change/", listing.text)
        if not pk:
            return False, "no exercise in the admin"
        url = f"/admin/grader/exercise/{pk.group(1)}/validate/"
        page = c.get(url)
        has_post_form = bool(re.search(r'<form[^>]*method="post"', page.text, re.I))
        posted = c.post(url, form={"csrfmiddlewaretoken": c.csrf(url)})
        ok = page.status == 200 and has_post_form and posted.status == 302
        return ok, (
            f"GET {page.status} shows the last result and a POST form ({has_post_form}); "
            f"POST {posted.status} queues a worker job ({page.seconds * 1e3:.0f} ms for the GET)"
        )

    def staff_permissions(self) -> tuple[bool | None, str]:
        staff = self.need_accounts()["staff"]
        c = self.client()
        if c.login(staff["username"], staff["password"]).status != 302:
            return False, "the permission-less staff account could not log in"
        codes = {
            path: c.get(path).status
            for path in (
                "/staff/submissions/",
                "/staff/misconceptions/",
                "/staff/grades.csv",
                f"/staff/exercises/{EXERCISE}/regrade/",
            )
        }
        token = c.csrf("/")
        regrade = c.post(
            f"/staff/exercises/{EXERCISE}/regrade/",
            form={"action": "apply", "csrfmiddlewaretoken": token},
        )
        codes["POST regrade"] = regrade.status
        admin = c.get("/admin/grader/submission/").status
        codes["admin submissions"] = admin
        ok = all(code in (403, 404) for code in codes.values())
        return ok, ", ".join(f"{k} {v}" for k, v in codes.items())

    def crafted_input(self) -> tuple[bool, str]:
        anon = self.client()
        student = self.client()
        student.login(*STUDENT)
        instructor = self._instructor()
        token = student.csrf(f"/exercises/{EXERCISE}/")
        codes = {
            "api role NUL": anon.get("/api/questions/?role=a%00b").status,
            "api level L9": anon.get("/api/questions/?level=L9").status,
            "history a=²": student.get(f"/exercises/{EXERCISE}/history/?a=%C2%B2&b=1").status,
            "history a=10^20": student.get(
                f"/exercises/{EXERCISE}/history/?a=99999999999999999999&b=1"
            ).status,
            "staff user NUL": instructor.get("/staff/submissions/?user=a%00").status,
            "staff page=²": instructor.get("/staff/submissions/?page=%C2%B2").status,
            "answer NUL": student.post(
                f"/questions/{QUESTION}/answer/",
                form={"text": "scale\x00", "csrfmiddlewaretoken": token},
            ).status,
        }
        form_nul = student.post(
            f"/exercises/{EXERCISE}/submit/",
            form={"code": "def f():\x00 pass", "csrfmiddlewaretoken": token},
            headers={"HX-Request": "true"},
        )
        refused = "could not be read" in form_nul.text
        codes["submit form NUL"] = form_nul.status
        ok = all(code in (400, 404) for k, code in codes.items() if k != "submit form NUL")
        ok = ok and form_nul.status < 500 and refused
        return ok, ", ".join(f"{k} {v}" for k, v in codes.items()) + (
            " (refused with its message)" if refused else " (not refused)"
        )

    def body_limits(self) -> tuple[bool, str]:
        url = urllib.parse.urlsplit(self.base)
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
        size = 200 * 1024 * 1024
        started = time.monotonic()
        conn.putrequest("POST", "/api/token/")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(size))
        conn.endheaders()
        with contextlib.suppress(OSError):  # the server may have answered and closed already
            conn.send(b"{" + b" " * (256 * 1024))  # a start; the rest never needs to go
        response = conn.getresponse()
        response.read()
        conn.close()
        big_seconds = time.monotonic() - started
        token = self.need_accounts()["student_token"] if self.accounts else None
        deep = self.client(token).request(
            "POST",
            "/api/submissions/" if token else "/api/token/",
            body=b"[" * 1000 + b"]" * 1000,
            content_type="application/json",
        )
        ok = response.status == 413 and big_seconds < 2 and deep.status == 400
        return ok, (
            f"200 MB body: {response.status} in {big_seconds * 1e3:.0f} ms; "
            f"1,000-deep JSON: {deep.status} {deep.text[:60]}"
        )

    def brute_force(self) -> tuple[bool | None, str]:
        victim = self.need_accounts()["victim"]
        c = self.client()
        codes = [c.login(victim["username"], "wrong-password").status for _ in range(6)]
        right = c.login(victim["username"], victim["password"])
        locked = right.status == 429 and "sessionid" not in c.cookies
        return locked, (
            f"6 wrong passwords on the login form: {codes}; then the right one: {right.status}"
            + (" (locked out)" if locked else " (logged in!)")
        )

    def token_throttle(self) -> tuple[bool, str]:
        fresh_minute()
        codes = []
        for _ in range(14):
            r = self.client().post(
                "/api/token/",
                form={"username": f"nobody-{secrets.token_hex(4)}", "password": "x"},
            )
            codes.append(r.status)
        first = codes.index(429) + 1 if 429 in codes else None
        return first is not None and first <= 11, (
            f"14 token requests with new usernames: first 429 at #{first}, "
            f"{codes.count(401)} answered 401"
        )

    def submit_limit(self) -> tuple[bool | None, str]:
        token = self.need_accounts()["student_token"]
        fresh_minute()
        page = self.client()
        if page.login(*STUDENT).status != 302:
            return False, "the student could not log in"
        csrf = page.csrf(f"/exercises/{EXERCISE}/")
        api = self.client(token)
        throttled = {"form": 0, "api": 0}
        passed = {"form": 0, "api": 0}
        for i in range(30):
            if i % 2:
                r = api.api("POST", "/api/submissions/", {"exercise": EXERCISE, "code": CORRECT})
                hit = r.status == 429 and "Too many submissions" in r.text
                path = "api"
            else:
                r = page.post(
                    f"/exercises/{EXERCISE}/submit/",
                    form={"code": CORRECT, "csrfmiddlewaretoken": csrf},
                    headers={"HX-Request": "true"},
                )
                hit = "Too many submissions" in r.text
                path = "form"
            (throttled if hit else passed)[path] += 1
        total = passed["form"] + passed["api"]
        ok = total <= 20 and throttled["form"] > 0 and throttled["api"] > 0
        return ok, (
            f"30 submits alternating form and API: {total} under the limit "
            f"({passed['form']} form, {passed['api']} API), then both refused "
            f"({throttled['form']} form, {throttled['api']} API); the API's limit is 20/min"
        )

    def signup(self) -> tuple[bool, str]:
        def attempt(username: str) -> Response:
            c = self.client()
            token = c.csrf("/accounts/signup/")
            password = "Audit-" + secrets.token_hex(8)
            return c.post(
                "/accounts/signup/",
                form={
                    "username": username,
                    "password1": password,
                    "password2": password,
                    "csrfmiddlewaretoken": token,
                },
            )

        tag = secrets.token_hex(3)
        look_alike = attempt(f"{LOOK_ALIKE}{tag}")
        codes = [attempt(f"audit-signup{i}-{tag}").status for i in range(7)]
        created = codes.count(302)
        if look_alike.status == 429:
            confusable = "the look-alike name was throttled before its check"
        elif look_alike.status != 302 and "look alike" in look_alike.text:
            confusable = f"the look-alike {LOOK_ALIKE!r} refused"
        else:
            return False, f"the look-alike {LOOK_ALIKE!r} answered {look_alike.status}"
        ok = 429 in codes and created <= 5
        return ok, f"{confusable}; 7 more sign-ups: {codes} ({created} accounts made)"

    def anon_answers(self) -> tuple[bool, str]:
        fresh_minute()
        c = self.client()
        token = c.csrf(f"/questions/{QUESTION}/")
        codes = [
            c.post(
                f"/questions/{QUESTION}/answer/",
                form={
                    "text": "Dividing by sqrt(d_k) keeps the variance of the scores at one.",
                    "csrfmiddlewaretoken": token,
                },
            ).status
            for _ in range(36)
        ]
        first = codes.index(429) + 1 if 429 in codes else None
        return first is not None and first <= 31, (
            f"36 anonymous answers: first 429 at #{first} (limit 30/min)"
        )

    def forwarded_for(self) -> tuple[bool, str]:
        fresh_minute()
        codes = [
            self.client()
            .get(
                "/api/questions/",
                headers={"X-Forwarded-For": f"198.51.100.{i}, 203.0.113.{i % 250}"},
            )
            .status
            for i in range(80)
        ]
        served = codes.count(200)
        return served <= 60 and 429 in codes, (
            f"80 anonymous API calls, each with a new X-Forwarded-For: {served} served, "
            f"{codes.count(429)} refused (limit 60/min)"
        )

    def fair_share(self) -> tuple[bool | None, str]:
        accounts = self.need_accounts()
        burners = [self.client(b["token"]) for b in accounts["burners"]]
        honest = self.client(accounts["honest"]["token"])
        queued: list[tuple[Client, int]] = []
        for client in burners:
            for _ in range(5):  # the queue cap per user
                r = client.api("POST", "/api/submissions/", {"exercise": EXERCISE, "code": BURNER})
                if r.status == 201:
                    queued.append((client, r.json()["id"]))  # type: ignore[index]
        time.sleep(1.0)  # the burners' first grades are running
        started = time.monotonic()
        r = honest.api("POST", "/api/submissions/", {"exercise": EXERCISE, "code": CORRECT})
        if r.status != 201:
            return False, f"the honest submission answered {r.status}"
        mine = r.json()  # type: ignore[assignment]
        position = mine.get("queue_position")
        while mine["status"] not in FINAL:
            if time.monotonic() - started > 180:
                return False, "the honest submission had no verdict after 180 s"
            time.sleep(0.1)
            mine = honest.api("GET", mine["url"]).json()  # type: ignore[assignment]
        wait = time.monotonic() - started
        finished = [c.api("GET", f"/api/submissions/{i}/").json() for c, i in queued]
        ahead = sum(
            1
            for s in finished
            if s.get("finished_at") and s["finished_at"] < mine["finished_at"]  # type: ignore[index]
        )
        ok = mine["status"] == "passed" and ahead <= len(queued) // 2
        return ok, (
            f"3 accounts queued {len(queued)} CPU burners first; the honest verdict "
            f"({mine['status']}) came after {wait:.1f} s, behind {ahead} of them "
            f"(queue position shown at submit: {position})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=os.environ.get("AUDIT_BASE", "http://127.0.0.1:8000"))
    parser.add_argument("--no-fair-share", action="store_true", help="skip the slow probe")
    args = parser.parse_args()
    audit = Audit(args.base)
    audit.setup()
    probes: list[tuple[str, Callable[[], tuple[bool | None, str]]]] = [
        ("2 CSP and Permissions-Policy", audit.csp_headers),
        ("12 schema and /api/exercises/", audit.schema),
        ("1 stored XSS through math", audit.xss),
        ("11 Validate is a POST", audit.validate_is_post),
        ("8 staff without permissions", audit.staff_permissions),
        ("10 crafted input is 400/404", audit.crafted_input),
        ("7 body size and JSON depth", audit.body_limits),
        ("3 login brute force locks out", audit.brute_force),
        ("3 token endpoint throttled", audit.token_throttle),
        ("5 form submit limit = API's", audit.submit_limit),
        ("5,13 sign-up limited, look-alikes refused", audit.signup),
        ("5 anonymous answers limited", audit.anon_answers),
        ("4 spoofed X-Forwarded-For", audit.forwarded_for),
    ]
    if not args.no_fair_share:
        probes.append(("6 fair share of grading", audit.fair_share))
    for name, probe in probes:
        audit.run(name, probe)
    failed = [r for r in audit.results if r[1] == "FAIL"]
    print(
        f"\n{len(audit.results) - len(failed)} of {len(audit.results)} probes did not fail"
        + (f"; FAILED: {', '.join(r[0] for r in failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
