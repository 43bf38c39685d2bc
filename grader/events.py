"""What the grader tells the apps above it, without importing them: ``verdict_stored``
(kwargs ``submission_id``, ``user_id``, ``exercise_id``) is sent after the commit that stored
a verdict, a first grade or a regrade's."""

from django.dispatch import Signal

verdict_stored = Signal()
