"""Publish task messages by name, so services never import `grader.tasks`.

Data flows one way: views and the API call services, services publish here, the worker's tasks
call services. A message carries ids only; the worker reads everything else from the database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading

from celery import current_app
from django.conf import settings
from kombu import Connection, Producer

log = logging.getLogger(__name__)

# The names `grader.tasks` registers its tasks under (`@shared_task(name=...)`); a test checks
# that each one is registered, so a rename cannot silently orphan the messages.
GRADE_SUBMISSION = "grader.grade_submission"
REGRADE_PREVIEW = "grader.regrade_preview"
VALIDATE_EXERCISE = "grader.validate_exercise"
RUN_TRIAL = "grader.run_trial"  # Run before Submit (grader.services.trials)
TASK_NAMES = (GRADE_SUBMISSION, REGRADE_PREVIEW, VALIDATE_EXERCISE, RUN_TRIAL)
# Published by beat only (settings.CELERY_BEAT_SCHEDULE), on a queue of its own.
SWEEP_SUBMISSIONS = "grader.sweep_submissions"
SWEEPER_QUEUE = "sweeper"


def _connection() -> Connection:
    """A broker connection whose every step is bounded by GRADER_PUBLISH_TIMEOUT_SECONDS.

    kombu's defaults retry a failed connect for up to broker_connection_timeout (4 s) with
    2 s sleeps, whatever task_publish_retry says: a submit request then hung for seconds
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


def task_publish(
    *,
    name: str,
    args: tuple[int, ...],
    countdown: float | None = None,
    priority: int | None = None,
) -> bool:
    """Publish a task message, never blocking the caller for long and never retrying.

    ``priority`` is kombu's Redis priority, 0 to 9, where LOWER is served first: the
    transport keeps one list per step of ``priority_steps`` and its BRPOP lists them in
    ascending order (kombu/transport/redis.py, ``_brpop_start``). None means kombu's default,
    0. A message with a countdown is taken from Redis at once and held by a worker until due,
    so its priority orders nothing.

    A dead or hung broker is logged, never raised: the row is stored, and the sweeper
    publishes it once the broker is back (GRADER_REQUEUE_AFTER_SECONDS).
    """
    for _ in range(2):
        producer, reused = _held_producer()
        try:
            current_app.send_task(
                name,
                args=args,
                countdown=countdown,
                priority=priority,
                producer=producer,
                retry=False,
            )
        except Exception:  # kombu OperationalError, redis ConnectionError, socket timeout, ...
            _held_drop()
            if reused:
                continue  # stale (the broker restarted since): once more, on a fresh one
            log.warning("could not publish %s%s; it stays in the database", name, args)
            return False
        return True
    raise AssertionError("unreachable")  # the second try is always on a fresh connection


# One broker connection per thread, and its producer, kept between publishes: connecting anew
# for every message cost a submit more than the rest of its request (a TCP connect and kombu's
# channel set-up each time), and a producer per message a tenth of it (its exchange bound and
# copied each time). Keyed by process and broker URL: a forked process, or a changed setting,
# makes its own.
_local = threading.local()


def _held_producer() -> tuple[Producer, bool]:
    """This thread's producer, and whether it was used before (so may be stale)."""
    conf = current_app.conf
    key = (os.getpid(), conf.broker_write_url or conf.broker_url)
    held = getattr(_local, "held", None)
    if held is not None and held[0] == key:
        return held[2], True
    connection = _connection()
    producer = current_app.amqp.Producer(connection, auto_declare=False)
    _local.held = (key, connection, producer)
    return producer, False


def _held_drop() -> None:
    held, _local.held = getattr(_local, "held", None), None
    if held is not None:
        with contextlib.suppress(Exception):
            held[1].release()
