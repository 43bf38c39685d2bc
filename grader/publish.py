"""Publish task messages by name, so services never import `grader.tasks`.

Data flows one way: views and the API call services, services publish here, the worker's tasks
call services. A message carries ids only; the worker reads everything else from the database.
"""

from __future__ import annotations

import logging

from celery import current_app

log = logging.getLogger(__name__)

# The names `grader.tasks` registers its tasks under (`@shared_task(name=...)`); a test checks
# that each one is registered, so a rename cannot silently orphan the messages.
GRADE_SUBMISSION = "grader.grade_submission"
REGRADE_PREVIEW = "grader.regrade_preview"
TASK_NAMES = (GRADE_SUBMISSION, REGRADE_PREVIEW)


def task_publish(*, name: str, args: tuple[int, ...], countdown: float | None = None) -> bool:
    """Publish a task message; a dead broker is logged, never raised: the row is stored."""
    try:
        current_app.send_task(name, args=args, countdown=countdown)
    except Exception:  # kombu OperationalError, redis ConnectionError, ...
        log.warning("could not publish %s%s; it stays in the database", name, args)
        return False
    return True
