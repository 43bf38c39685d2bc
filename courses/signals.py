"""What courses tell others: ``score_changed`` (kwargs ``assignment_id``, ``user_id``) is sent
after the commit that may have changed the score that counts for that student on that
assignment (a verdict stored, a regrade, an answer, an override, an extension). Receivers read
the score again (courses.selectors.score_that_counts); the signal carries no score, so a late
or repeated delivery can never send a stale one."""

from django.dispatch import Signal

from common.events import event_send_on_commit

score_changed = Signal()


def score_changed_send(*, assignment_id: int, user_id: int) -> None:
    """Send ``score_changed`` once the current transaction commits (at once outside one)."""
    event_send_on_commit(
        signal=score_changed, sender=None, assignment_id=assignment_id, user_id=user_id
    )
