"""Fixtures shared by every test package. Keep this small; package conftests hold the rest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The database contents serialized at setup, per alias (see _keep_serialized_contents).
_SERIALIZED_CONTENTS: dict[str, str] = {}


@pytest.fixture
def seed_content(db: None) -> None:
    """The seed questions and explainer page.

    Migration 0002 loads them, but transactional tests (live_server, transactional_db) flush
    the tables afterwards; this puts back whatever is missing. Idempotent.
    """
    from django.apps import apps

    from questions.content import content_load

    content_load(apps)


@pytest.fixture
def instructor(db: None):
    """A staff user in the Instructors group (authoring rights on content, nothing more)."""
    from django.contrib.auth import get_user_model

    from quizsite.roles import instructors_group_sync

    user = get_user_model().objects.create_user(
        username="instructor-t", password="instructor-pass-123", is_staff=True
    )
    user.groups.add(instructors_group_sync())
    return user


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give every transactional test a serialized rollback.

    A transactional test ends with a flush, and the flush re-runs post_migrate, which re-creates
    the Instructors group (quizsite.roles) with a new id. A later test that asks for
    serialized_rollback then restores the original group and fails on its unique name. When
    every transactional test restores the migrated database instead (seed content included),
    the flushes skip post_migrate and each test starts from the same state.
    """
    for item in items:
        names = getattr(item, "fixturenames", ())
        marker = item.get_closest_marker("django_db")
        kwargs = dict(marker.kwargs) if marker else {}
        transactional = (
            kwargs.get("transaction")
            or kwargs.get("reset_sequences")
            or "live_server" in names
            or "transactional_db" in names
        )
        if transactional and not kwargs.get("serialized_rollback"):
            kwargs.update(transaction=True, serialized_rollback=True)
            item.add_marker(pytest.mark.django_db(**kwargs))


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
