"""Hand an anonymous candidate's attempts to the account they log in to."""

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from questions.services import CANDIDATE_SESSION_KEY, attempts_claim


@receiver(user_logged_in, dispatch_uid="questions.attempts_claim")
def _claim_anonymous_attempts(
    sender: Any, request: HttpRequest | None, user: Any, **_: Any
) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    token = session.pop(CANDIDATE_SESSION_KEY, "")
    attempts_claim(session_key=token, user=user)
