"""Publish task messages by name, so services never import `grader.tasks`.

Data flows one way: views and the API call services, services publish here, the worker's tasks
call services. A message carries ids only; the worker reads everything else from the database.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings
from kombu import Connection

log = logging.getLogger(__name__)

# The names `grader.tasks` registers its tasks under (`@shared_task(name=...)`); a test checks
# that each one is registered, so a rename cannot silently orphan the messages.
GRADE_SUBMISSION = "grader.grade_submission"
REGRADE_PREVIEW = "grader.regrade_preview"
VALIDATE_EXERCISE = "grader.validate_exercise"
TASK_NAMES = (GRADE_SUBMISSION, REGRADE_PREVIEW, VALIDATE_EXERCISE)
# Published by beat only (settings.CELERY_BEAT_SCHEDULE), on a queue of its own.
SWEEP_SUBMISSIONS = "grader.sweep_submissions"
SWEEPER_QUEUE = "sweeper"


def _connection() -> Connection:
    """A broker connection whose every step is bounded by GRADER_PUBLISH_TIMEOUT_SECONDS.

    kombu's defaults retry a failed connect for up to broker_connection_timeout (4 s) with
    2 s sleeps, whatever task_publish_retry says: a submit request then hung for about 6 s
    while Redis was down. Here: one connect attempt (max_retries 0) with a short connect
    timeout, and a short socket timeout for a Redis that accepts but never answers.
    """
    timeout = settings.GRADER_PUBLISH_TIMEOUT_SECONDS
    return current_app.connection_for_write(
        connect_timeout=timeout,
        transport_options={
            "max_retries": 0,
            "socket_connect_timeout": timeout,
            "socket_timeout": timeout,
        },
    )


def task_publish(*, name: str, args: tuple[int, ...], countdown: float | None = None) -> bool:
    """Publish a task message, never blocking the caller for long and never retrying.

    A dead or hung broker is logged, never raised: the row is stored, and the sweeper
    publishes it once the broker is back (GRADER_REQUEUE_AFTER_SECONDS).
    """
    try:
        with _connection() as connection:
            current_app.send_task(
                name, args=args, countdown=countdown, connection=connection, retry=False
            )
    except Exception:  # kombu OperationalError, redis ConnectionError, socket timeout, ...
        log.warning("could not publish %s%s; it stays in the database", name, args)
        return False
    return True
