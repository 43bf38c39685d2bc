"""The site as deployed, for browser tests: production settings and hashed static files.

`DeployedSite` collects the static files with the manifest storage into a STATIC_ROOT of its own
(`manage.py collectstatic`, as a deploy does), then starts gunicorn from the project directory
with DEBUG off, and a real Celery worker with the same settings, on the test session's database
and Redis. `watch(tab, site)` records what a tab loaded that a deploy would break on: a failed
request, a script served under a name the manifest does not list (so found by a file name
instead of `{% static %}`, and cached across deploys), or an uncaught JavaScript error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import global_settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import override_settings
from playwright.sync_api import Page, Request, Response

from tests.pipeline.stack import LOGS, ROOT, Gunicorn, Redis, Worker, stack_env

STATIC_PREFIX = "/static/"
# Production settings (quizsite/settings.py with DEBUG off), over plain HTTP on this machine:
# the HTTPS redirect and HSTS are the proxy's business here, everything else is as deployed.
PRODUCTION_ENV = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "false",
    "SECURE_HSTS_SECONDS": "0",
}
# A navigation cancels the requests still in flight (htmx polls); that is not a failure.
ABORTED = "net::ERR_ABORTED"


class _NoSettings:
    """pytest-django turns a live server's settings on around each test; the deployed site is
    another process with settings of its own, so there is nothing to turn on."""

    def enable(self) -> None:
        pass

    def disable(self) -> None:
        pass


class DeployedSite:
    """collectstatic, Redis, a Celery worker and gunicorn, all with production settings.

    Usable as pytest-django's `live_server` (it has `url`), so the e2e tabs of conftest.py
    (page, logged_in_page, instructor_page) open it with their CSP checks.
    """

    _live_server_modified_settings = _NoSettings()

    def __init__(self, static_root: Path, name: str = "production") -> None:
        self.static_root = static_root
        self.env = {**PRODUCTION_ENV, "STATIC_ROOT": str(static_root)}
        self.redis = Redis()
        self.worker = Worker(f"e2e-{name}")
        self.web = Gunicorn(name)
        self.url = ""
        self.hashed_names: frozenset[str] = frozenset()

    def start(self) -> None:
        self.collectstatic()
        self.redis.start()
        self.worker.start(**self.env)
        self.url = self.web.start(**self.env)

    def stop(self) -> None:
        self.web.stop()
        self.worker.stop()
        self.redis.stop()

    def collectstatic(self) -> None:
        LOGS.mkdir(exist_ok=True)
        log = LOGS / "collectstatic-production.log"
        with log.open("wb") as out:
            result = subprocess.run(
                [sys.executable, "manage.py", "collectstatic", "--noinput"],
                cwd=ROOT,
                env=stack_env(**self.env),
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        assert result.returncode == 0, f"collectstatic failed: {log}"
        manifest = json.loads((self.static_root / "staticfiles.json").read_text())
        self.hashed_names = frozenset(manifest["paths"].values())

    def is_hashed(self, url: str) -> bool:
        """Whether url is a static file under the name the manifest gives it."""
        path = urlsplit(url).path
        return path.startswith(STATIC_PREFIX) and path[len(STATIC_PREFIX) :] in self.hashed_names


def password_set(user: AbstractBaseUser, password: str) -> None:
    """Store user's password hashed the way the deployed site checks it.

    The test settings hash passwords with MD5 to make users fast, and production's hashers do
    not accept that hash: a user made by a test could never log in there.
    """
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        user.set_password(password)
        user.save(update_fields=["password"])


@dataclass
class Loads:
    """What went wrong while a tab loaded its pages (see watch)."""

    failed: list[str] = field(default_factory=list)
    unhashed_scripts: list[str] = field(default_factory=list)
    js_errors: list[str] = field(default_factory=list)
    scripts: set[str] = field(default_factory=set)

    def problems(self) -> list[str]:
        return [
            *(f"failed request: {entry}" for entry in self.failed),
            *(f"script not under its manifest name: {url}" for url in self.unhashed_scripts),
            *(f"JavaScript error: {error}" for error in self.js_errors),
        ]


def watch(tab: Page, site: DeployedSite) -> Loads:
    """Record, from now on, the failed requests, unhashed static scripts and JS errors of tab."""
    loads = Loads()

    def on_request(request: Request) -> None:
        if request.resource_type != "script" or not _is_static(request.url):
            return
        loads.scripts.add(urlsplit(request.url).path)
        if not site.is_hashed(request.url):
            loads.unhashed_scripts.append(request.url)

    def on_response(response: Response) -> None:
        if response.status >= 400:
            loads.failed.append(f"{response.status} {response.url}")

    def on_request_failed(request: Request) -> None:
        if request.failure != ABORTED:
            loads.failed.append(f"{request.failure} {request.url}")

    tab.on("request", on_request)
    tab.on("response", on_response)
    tab.on("requestfailed", on_request_failed)
    tab.on("pageerror", lambda error: loads.js_errors.append(str(error)))
    return loads


def _is_static(url: str) -> bool:
    return urlsplit(url).path.startswith(STATIC_PREFIX)
