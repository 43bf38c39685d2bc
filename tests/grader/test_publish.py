"""Services publish by task name: every name they use is one the worker registers."""

from __future__ import annotations

from grader import publish, tasks
from quizsite.celery import app


def test_every_published_name_is_a_registered_task() -> None:
    registered = {
        tasks.grade_submission.name,
        tasks.regrade_preview.name,
        tasks.validate_exercise.name,
        tasks.run_trial.name,
    }
    assert set(publish.TASK_NAMES) == registered
    assert all(name in app.tasks for name in publish.TASK_NAMES)
