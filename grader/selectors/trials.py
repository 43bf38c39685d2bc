"""Reads of Run before Submit (``TrialRun``)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from grader.engine.trials import visible_examples_view
from grader.models import Exercise, TrialRun
from grader.selectors.exercises import exercise_published_q

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

# Nothing sweeps a lost Run (it is a quick look, not a grade): after this long the page stops
# polling and asks for another Run.
TRIAL_STALE_SECONDS = 120
# Row ids are 64-bit signed integers in every database we run on.
ID_MAX = 2**63 - 1


def trial_run_get_for_user(*, user: AbstractBaseUser, trial_id: int) -> TrialRun | None:
    """Only its owner reads a Run, of a published exercise; for anyone else it does not exist
    (404, not 403)."""
    if not user.is_authenticated or not 0 < trial_id <= ID_MAX:  # SQLite overflows past 64 bits
        return None
    qs = TrialRun.objects.select_related("exercise")
    return qs.filter(exercise_published_q(via="exercise__"), pk=trial_id, user=user).first()


def trial_run_is_stale(*, trial: TrialRun) -> bool:
    age = timezone.now() - trial.created_at
    return not trial.is_final and age > timedelta(seconds=TRIAL_STALE_SECONDS)


def exercise_visible_examples(*, exercise: Exercise) -> list[dict[str, Any]]:
    """The examples the statement shows and a Run runs: one source, grader.engine.trials."""
    return visible_examples_view(exercise.kind)
