"""Signals an app sends to the apps above it once the current transaction has committed."""

from django.db import transaction
from django.dispatch import Signal


def event_send_on_commit(*, signal: Signal, sender: type | None, **ids: int) -> None:
    """Send ``signal`` with ``ids`` after the commit, robustly.

    After the commit, because a receiver must never read a row that a rollback then took back.
    Robustly, because the row is already stored: a receiver's failure (a course's score, a grade
    passback) is logged by Django's ``send_robust`` with its traceback, and neither undoes the
    row nor stops the other receivers or the worker that stored it.
    """
    transaction.on_commit(lambda: signal.send_robust(sender=sender, **ids))
