"""Celery tasks for LTI: thin, they take ids and call lti.services."""

from __future__ import annotations

import logging

from celery import shared_task

from lti import services
from lti.errors import GradeSendFailed
from lti.models import CourseContext

GRADE_SEND = services.GRADE_SEND_TASK
ROSTERS_SYNC = "lti.rosters_sync"
GRADES_RETRY = "lti.grades_retry"

log = logging.getLogger(__name__)


# Retried with exponential backoff (jittered, capped) when the platform refuses or is down; the
# row keeps the platform's last answer for instructors meanwhile.
@shared_task(
    name=GRADE_SEND,
    autoretry_for=(GradeSendFailed,),
    retry_backoff=5,
    retry_backoff_max=15 * 60,
    retry_jitter=True,
    max_retries=6,
)
def grade_send(assignment_id: int, user_id: int) -> None:
    services.grade_send(assignment_id=assignment_id, user_id=user_id)


@shared_task(name=ROSTERS_SYNC)
def rosters_sync() -> None:
    for pk in CourseContext.objects.values_list("pk", flat=True):
        try:
            services.roster_sync(course_context_id=pk)
        except Exception:  # one platform down must not stop the others; its row says why
            log.exception("roster sync failed for course context %s", pk)


@shared_task(name=GRADES_RETRY)
def grades_retry() -> None:
    services.grade_syncs_failed_retry()
