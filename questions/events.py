"""What the questions app tells the apps above it, without importing them: ``answer_stored``
(kwargs ``attempt_id``, ``user_id``, ``question_id``) is sent after the commit that stored a
signed-in user's answer to a question (not a follow-up's)."""

from django.dispatch import Signal

answer_stored = Signal()
