"""Fixtures shared by every test package. Keep this small; package conftests hold the rest."""

from __future__ import annotations

import pytest


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
