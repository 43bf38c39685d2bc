"""A score that may have changed on an LTI-linked assignment becomes a passback task.

Published by name with the grader's bounded publisher: the signal fires after a verdict's
commit, inside the worker or a request, and must never block or fail it."""

from __future__ import annotations

from typing import Any

from courses.signals import score_changed
from grader.publish import task_publish
from lti.models import AssignmentLink

GRADE_SEND = "lti.grade_send"


def grade_send_publish(*, assignment_id: int, user_id: int) -> bool:
    if (
        not AssignmentLink.objects.filter(assignment_id=assignment_id)
        .exclude(line_item_url="")
        .exists()
    ):
        return False
    return task_publish(name=GRADE_SEND, args=(assignment_id, user_id))


def _on_score_changed(sender: Any, *, assignment_id: int, user_id: int, **kwargs: Any) -> None:
    grade_send_publish(assignment_id=assignment_id, user_id=user_id)


score_changed.connect(_on_score_changed, dispatch_uid="lti-grade-send")
