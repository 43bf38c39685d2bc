"""Browser fixtures for end-to-end tests: headless Debian Chromium driven by Playwright.

Reuse them in any e2e test:
    page            a fresh browser tab whose base URL is the live server (relative goto works)
    js_errors       the uncaught JavaScript errors of `page` so far (assert it is empty)
    logged_in_page  factory: logged_in_page(user, password) -> a tab logged in through the form
    instructor_page a tab logged in as a staff member of the Instructors group
    screenshot      screenshot("name") saves test-artifacts/<name>.png
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django would otherwise refuse ORM
# calls from the test body (fixtures, assertions on the database).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

from playwright.sync_api import Browser, Page, Playwright, sync_playwright

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


def _new_page(browser: Browser, base_url: str) -> Page:
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


@pytest.fixture
def js_errors() -> list[str]:
    return []


@pytest.fixture
def page(browser: Browser, live_server, seed_content: None, js_errors: list[str]) -> Iterator[Page]:
    tab = _new_page(browser, live_server.url)
    tab.on("pageerror", lambda error: js_errors.append(str(error)))
    yield tab
    tab.context.close()


@pytest.fixture
def logged_in_page(
    browser: Browser, live_server, seed_content: None
) -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def login(user, password: str) -> Page:
        tab = _new_page(browser, live_server.url)
        opened.append(tab)
        tab.goto("/accounts/login/")
        tab.get_by_label("Username").fill(user.get_username())
        tab.get_by_label("Password").fill(password)
        tab.locator("main form button[type=submit]").click()
        tab.wait_for_load_state()
        assert "/accounts/login/" not in tab.url, "login failed"
        return tab

    yield login
    for tab in opened:
        tab.context.close()


@pytest.fixture
def instructor_page(logged_in_page: Callable[..., Page], instructor) -> Page:
    return logged_in_page(instructor, "instructor-pass-123")


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[..., Path]:
    def take(tab: Page, name: str | None = None) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name or request.node.name}.png"
        tab.screenshot(path=str(path), full_page=True)
        return path

    return take
