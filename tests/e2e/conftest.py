"""Browser fixtures for end-to-end tests: headless Debian Chromium driven by Playwright.

Reuse them in any e2e test:
    page            a fresh browser tab whose base URL is the live server (relative goto works)
    js_errors       the uncaught JavaScript errors of `page` so far (assert it is empty)
    logged_in_page  factory: logged_in_page(user, password) -> a tab logged in through the form
    instructor_page a tab logged in as a staff member of the Instructors group
    screenshot      screenshot("name") saves test-artifacts/<name>.png

Every tab fails its test if the page broke the Content-Security-Policy (the site sends it in
tests as in production): a page that needs an inline script or eval shows up here.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

# Playwright's sync API runs an event loop in this thread; Django would otherwise refuse ORM
# calls from the test body (fixtures, assertions on the database).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

from playwright.sync_api import Browser, Page, Playwright, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.factories import student_create
from tests.lti.platform import Platform
from tests.pipeline.stack import Redis, Worker

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCREENSHOT_TIMEOUT_MS = 60_000
TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (make install provides it)")
    with sync_playwright() as p:
        yield p


class _Chromium:
    """One browser for the session, launched again if its process has died.

    Chromium's own process crashing (seen once in eight CI runs, mid-navigation) must cost one
    rerun of the test it happened in, not every browser test after it.
    """

    def __init__(self, playwright: Playwright) -> None:
        self.playwright = playwright
        self.current: Browser | None = None

    def get(self) -> Browser:
        if self.current is None or not self.current.is_connected():
            self.current = self.playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
        return self.current

    def close(self) -> None:
        if self.current is not None and self.current.is_connected():
            self.current.close()


@pytest.fixture(scope="session")
def _chromium(playwright: Playwright) -> Iterator[_Chromium]:
    chromium = _Chromium(playwright)
    yield chromium
    chromium.close()


@pytest.fixture
def browser(_chromium: _Chromium) -> Browser:
    return _chromium.get()


# Chromium reports a blocked script, style, eval or connection on the console with this.
CSP_MARK = "Content Security Policy"


def _wait_for_function_without_eval(
    self: Page,
    expression: str,
    *,
    arg: Any = None,
    timeout: float | None = None,
    polling: Any = None,
) -> Any:
    """Page.wait_for_function, polled from here instead of inside the page.

    Playwright polls a string predicate inside the page with eval, which the site's CSP
    (rightly) refuses once the first check fails; page.evaluate goes through the DevTools
    protocol, which the CSP does not govern. Same arguments, same TimeoutError. Patched on the
    class, so every tab of every e2e test (their own fixtures too) waits this way.
    """
    deadline = time.monotonic() + (TIMEOUT_MS if timeout is None else timeout) / 1000
    step = polling / 1000 if isinstance(polling, (int, float)) else 0.05
    while not self.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise PlaywrightTimeoutError(f"wait_for_function: {expression!r} never held")
        time.sleep(step)
    return self.evaluate_handle(expression, arg)


Page.wait_for_function = _wait_for_function_without_eval  # type: ignore[method-assign]


def _new_page(browser: Browser, base_url: str) -> Page:
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.csp_violations = []  # type: ignore[attr-defined]
    tab.on(
        "console",
        lambda message: tab.csp_violations.append(message.text)  # type: ignore[attr-defined]
        if CSP_MARK in message.text
        else None,
    )
    return tab


def _fail_on_csp_violations(tab: Page) -> None:
    violations = getattr(tab, "csp_violations", [])
    if violations:
        pytest.fail("the page broke its Content-Security-Policy:\n" + "\n".join(violations))


@pytest.fixture
def js_errors() -> list[str]:
    return []


@pytest.fixture
def page(browser: Browser, live_server, seed_content: None, js_errors: list[str]) -> Iterator[Page]:
    tab = _new_page(browser, live_server.url)
    tab.on("pageerror", lambda error: js_errors.append(str(error)))
    yield tab
    tab.context.close()
    _fail_on_csp_violations(tab)


@pytest.fixture
def new_tab(browser: Browser) -> Iterator[Callable[[str], Page]]:
    """Open tabs on a base URL; each is closed after the test and fails it on a CSP violation."""
    opened: list[Page] = []

    def open_tab(base_url: str) -> Page:
        tab = _new_page(browser, base_url)
        opened.append(tab)
        return tab

    yield open_tab
    for tab in opened:
        tab.context.close()
    for tab in opened:
        _fail_on_csp_violations(tab)


@pytest.fixture
def logged_in_page(
    new_tab: Callable[[str], Page], live_server, seed_content: None
) -> Callable[..., Page]:
    def login(user, password: str) -> Page:
        tab = new_tab(live_server.url)
        tab.goto("/accounts/login/")
        tab.get_by_label("Username").fill(user.get_username())
        tab.get_by_label("Password").fill(password)
        tab.locator("main form button[type=submit]").click()
        tab.wait_for_load_state()
        assert "/accounts/login/" not in tab.url, "login failed"
        return tab

    return login


@pytest.fixture
def instructor_page(logged_in_page: Callable[..., Page], instructor) -> Page:
    return logged_in_page(instructor, "instructor-pass-123")


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[..., Path]:
    def take(tab: Page, name: str | None = None) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name or request.node.name}.png"
        # An artifact, not an assertion: a full-page capture of a long admin page took over
        # the default 15 s once on a machine three times slower than usual.
        tab.screenshot(path=str(path), full_page=True, timeout=SCREENSHOT_TIMEOUT_MS)
        return path

    return take


@pytest.fixture(scope="module")
def worker_stack(request: pytest.FixtureRequest) -> Iterator[None]:
    """A real Redis and a real Celery worker for one test module's submissions."""
    redis = Redis()
    redis.start()
    worker = Worker(f"e2e-{request.module.__name__.rsplit('.', 1)[-1]}")
    try:
        worker.start()
        yield
    finally:
        worker.stop()
        redis.stop()


@pytest.fixture
def student_page(worker_stack: None, logged_in_page: Callable[..., Page]) -> Page:
    """A logged-in student whose submissions a real worker grades."""
    user = student_create(username="student-e2e", password="student-pass-123")
    return logged_in_page(user, "student-pass-123")


@pytest.fixture
def platform(live_server, seed_content: None) -> Iterator[Platform]:
    """A running LTI test platform that knows this live server as its tool."""
    running = Platform(host=urlsplit(live_server.url).hostname or "localhost").start()
    running.tool_launch_url = f"{live_server.url}/lti/launch/"
    running.tool_jwks_url = f"{live_server.url}/lti/jwks/"
    yield running
    running.stop()


@pytest.fixture
def platform_tab(new_tab: Callable[[str], Page], platform: Platform) -> Callable[..., Page]:
    """Open the platform's course page, which frames a launch of the tool, in a new tab."""

    def open_course(hint: str, registration) -> Page:  # type: ignore[no-untyped-def]
        tab = new_tab(platform.url)
        login = platform.tool_launch_url.replace("/lti/launch/", f"/lti/login/{registration.uuid}/")
        tab.goto(f"{platform.url}/course/{hint}?{urlencode({'login': login})}")
        return tab

    return open_course
