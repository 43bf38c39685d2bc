"""A score that may have changed on an LTI-linked assignment becomes a passback task; the
signal fires after a verdict's or an answer's commit and must never block or fail it."""

from __future__ import annotations

from typing import Any

from courses.signals import score_changed
from lti.services import grade_send_request


def _on_score_changed(sender: Any, *, assignment_id: int, user_id: int, **kwargs: Any) -> None:
    grade_send_request(assignment_id=assignment_id, user_id=user_id)


score_changed.connect(_on_score_changed, dispatch_uid="lti-grade-send")
