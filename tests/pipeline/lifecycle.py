"""What the tests of a submission's lifecycle share: rows in any state and a counting executor
(their fixtures, a student, the seeded exercise and a publish recorder, are in conftest.py)."""

from __future__ import annotations

from django.utils import timezone

from grader.models import Submission
from tests.factories import submission_create


def make(user, exercise, **fields) -> Submission:  # type: ignore[no-untyped-def]
    fields.setdefault("status", Submission.Status.QUEUED)
    fields.setdefault("queued_at", timezone.now())
    fields.setdefault("seed", 1)
    return submission_create(user=user, exercise=exercise, code="x", **fields)


class CountingRuns:
    """A trusted executor (our reference function, never student text) that counts its runs."""

    def __init__(self) -> None:
        from grader.engine import reference
        from grader.engine.executors.trusted import CallableExecutor

        self.inner = CallableExecutor(reference.attention)
        self.runs = 0

    def start(self, request):  # type: ignore[no-untyped-def]
        self.runs += 1
        return self.inner.start(request)

    def close(self) -> None:
        pass
