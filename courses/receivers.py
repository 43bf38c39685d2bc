"""Turn what the apps below report (a verdict stored, an answer stored) into
courses.signals.score_changed for each assignment of that exercise or question in the
student's courses. The apps below never import courses; courses listens."""

from typing import Any

from django.dispatch import receiver

from courses.selectors import assignments_for_exercise, assignments_for_question
from courses.signals import score_changed_send
from grader.events import verdict_stored
from questions.events import answer_stored


@receiver(verdict_stored, dispatch_uid="courses.verdict_stored")
def _verdict_stored(sender: Any, *, user_id: int, exercise_id: int, **_: Any) -> None:
    for assignment_id in assignments_for_exercise(exercise_id=exercise_id, user_id=user_id):
        score_changed_send(assignment_id=assignment_id, user_id=user_id)


@receiver(answer_stored, dispatch_uid="courses.answer_stored")
def _answer_stored(sender: Any, *, user_id: int, question_id: int, **_: Any) -> None:
    for assignment_id in assignments_for_question(question_id=question_id, user_id=user_id):
        score_changed_send(assignment_id=assignment_id, user_id=user_id)
