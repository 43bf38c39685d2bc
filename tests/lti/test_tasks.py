"""The LTI tasks are registered under the names services publish, beat runs the roster sync,
and a changed score on a linked assignment is published without ever raising."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from courses.signals import score_changed
from lti import services, tasks
from quizsite.celery import app


def test_the_published_names_are_registered_tasks() -> None:
    app.loader.import_default_modules()
    assert services.GRADE_SEND_TASK in app.tasks
    assert tasks.ROSTERS_SYNC in app.tasks
    assert tasks.grade_send.name == services.GRADE_SEND_TASK


def test_beat_synchronises_rosters_and_retries_refused_scores() -> None:
    assert settings.CELERY_BEAT_SCHEDULE["lti-sync-rosters"]["task"] == tasks.ROSTERS_SYNC
    assert settings.CELERY_BEAT_SCHEDULE["lti-retry-grades"]["task"] == tasks.GRADES_RETRY
    app.loader.import_default_modules()
    assert tasks.GRADES_RETRY in app.tasks


@pytest.mark.django_db
def test_a_score_change_on_an_unlinked_assignment_publishes_nothing(monkeypatch) -> None:
    published: list[tuple[str, tuple[int, ...]]] = []
    monkeypatch.setattr(
        services, "task_publish", lambda *, name, args: published.append((name, args)) or True
    )
    score_changed.send(sender=None, assignment_id=123456, user_id=1)
    assert published == []


def _linked_assignment() -> Any:
    """An assignment tied to a platform's line item, as deep linking leaves it."""
    from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration

    from lti.models import AssignmentLink
    from tests.factories import assignment_create, course_create

    registration = LtiRegistration.objects.create(
        name="p",
        issuer="https://p.example",
        client_id="c",
        auth_url="https://p.example/a",
        token_url="https://p.example/t",
        keyset_url="https://p.example/k",
    )
    deployment = LtiDeployment.objects.create(registration=registration, deployment_id="d")
    context = LtiContext.objects.create(deployment=deployment, id_on_platform="ctx")
    assignment = assignment_create(course=course_create())
    AssignmentLink.objects.create(
        assignment=assignment, context=context, line_item_url="https://p.example/li/1"
    )
    return assignment


@pytest.mark.django_db
def test_a_score_change_on_a_linked_assignment_publishes_the_passback(monkeypatch) -> None:
    assignment = _linked_assignment()
    published: list[tuple[str, tuple[int, ...]]] = []
    monkeypatch.setattr(
        services, "task_publish", lambda *, name, args: published.append((name, args)) or True
    )
    score_changed.send(sender=None, assignment_id=assignment.pk, user_id=7)
    assert published == [(services.GRADE_SEND_TASK, (assignment.pk, 7))]


@pytest.mark.django_db
def test_failed_passbacks_are_published_again(monkeypatch) -> None:
    from lti.models import GradeSync
    from tests.factories import student_create

    assignment = _linked_assignment()
    failed, sent = student_create(username="f"), student_create(username="s")
    GradeSync.objects.create(assignment=assignment, user=failed, status=GradeSync.Status.FAILED)
    GradeSync.objects.create(assignment=assignment, user=sent, status=GradeSync.Status.SENT)
    published: list[tuple[str, tuple[int, ...]]] = []
    monkeypatch.setattr(
        services, "task_publish", lambda *, name, args: published.append((name, args)) or True
    )
    assert services.grade_syncs_failed_retry() == 1
    assert published == [(services.GRADE_SEND_TASK, (assignment.pk, failed.pk))]
