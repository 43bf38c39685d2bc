"""Fixtures shared by every test package. Keep this small; package conftests hold the rest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The database contents serialized at setup, per alias (see _keep_serialized_contents).
_SERIALIZED_CONTENTS: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Rate-limit counters and login lockouts live in the cache, which outlives each test's
    rollback (and user ids are reused after it): start every test from an empty one."""
    from django.core.cache import cache

    from grader.selectors.exercises import exercise_specs_forget
    from grader.selectors.submissions import grade_rate_forget

    cache.clear()
    exercise_specs_forget()  # the grading specs a worker keeps, likewise
    grade_rate_forget()  # and the grade rate a web process keeps
    yield


@pytest.fixture
def rate_window() -> None:
    """For a test that counts against a rate limit: keep it inside one window of the clock."""
    from tests.limits import rate_window_fresh

    rate_window_fresh()


@pytest.fixture
def seed_content(db: None) -> None:
    """The seed questions and explainer page.

    Migration 0002 loads them, but transactional tests (live_server, transactional_db) flush
    the tables afterwards; this puts back whatever is missing. Idempotent.
    """
    from django.apps import apps

    from questions.content_loading import content_load

    content_load(apps)


@pytest.fixture
def instructor(db: None):
    """A staff user in the Instructors group (authoring rights on content, nothing more)."""
    from tests.factories import instructor_create

    return instructor_create(username="instructor-t", password="instructor-pass-123")


def _is_transactional(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    marker = item.get_closest_marker("django_db")
    kwargs = marker.kwargs if marker else {}
    return bool(
        kwargs.get("transaction")
        or kwargs.get("reset_sequences")
        or "live_server" in names
        or "transactional_db" in names
    )


def _db_order(item: pytest.Item) -> int:
    # pytest-django's order: database tests in a rolled-back transaction, then transactional
    # tests (their flush empties the database), then tests without a database.
    if _is_transactional(item):
        return 1
    uses_db = item.get_closest_marker("django_db") or "db" in getattr(item, "fixturenames", ())
    return 0 if uses_db else 2


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Give every transactional test a serialized rollback, and run them after the others.

    A transactional test ends with a flush, and the flush re-runs post_migrate, which re-creates
    the Instructors group (accounts.roles) with a new id. A later test that asks for
    serialized_rollback then restores the original group and fails on its unique name. When
    every transactional test restores the migrated database instead (seed content included),
    the flushes skip post_migrate and each test starts from the same state.

    pytest-django counts a test that only asks for live_server (not transactional_db) as a
    plain database test and may run it among them, where its flush would empty the database
    for the tests that follow; the stable sort below runs it with the transactional ones.
    """
    result = yield
    for item in items:
        marker = item.get_closest_marker("django_db")
        kwargs = dict(marker.kwargs) if marker else {}
        if _is_transactional(item) and not kwargs.get("serialized_rollback"):
            kwargs.update(transaction=True, serialized_rollback=True)
            # Prepended: it must win over a test's own django_db marker, which it extends.
            item.add_marker(pytest.mark.django_db(**kwargs), append=False)
    items.sort(key=_db_order)
    return result


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None) -> Iterator[None]:
    """pytest-django's database setup, remembering the serialized contents it made."""
    from django.db import connections

    for alias in connections:
        contents = getattr(connections[alias], "_test_serialized_contents", None)
        if contents is not None:
            _SERIALIZED_CONTENTS[alias] = contents
    yield


def _keep_serialized_contents() -> None:
    """Put the serialized contents back on the current connection objects.

    Django keeps them as an attribute of the connection object, and connection objects are
    per thread, or per context while an event loop runs. Playwright's sync API marks its loop
    as running in the test thread, so once a browser test has started, Django hands out new
    connection objects without the attribute: serialized rollbacks then silently restore
    nothing (and the flush re-runs post_migrate), and later tests find an empty database.
    """
    if not _SERIALIZED_CONTENTS:
        return
    from django.db import connections

    for alias, contents in _SERIALIZED_CONTENTS.items():
        connection = connections[alias]
        if not hasattr(connection, "_test_serialized_contents"):
            connection._test_serialized_contents = contents


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
    if fixturedef.argname == "_django_db_helper":
        _keep_serialized_contents()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    _keep_serialized_contents()
