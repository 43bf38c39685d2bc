"""When a password reset request sends its mail.

The rule, chosen so that nobody can use the form against someone else:

- The page answers every well-formed request the same way (the "check your mail" page),
  whether or not an account has the address and whether or not a mail was sent, so it tells
  nothing about accounts and shows no error anyone else could cause.
- A client address may ask THROTTLE_PASSWORD_RESET times (5 an hour); past that its requests
  send nothing. Counted per client only: nobody else's requests spend the owner's.
- One address receives at most one mail every PASSWORD_RESET_MAIL_GAP_SECONDS (5 minutes),
  whoever asks: all clients together cannot send it more than 12 an hour, and a flood from
  elsewhere delays the owner's own mail by at most that gap once it stops. Meanwhile every
  mail the flood caused went to the owner's inbox with a working link, so the owner is never
  locked out of resetting, only spared duplicates.

A per-address hourly cap was the earlier rule: five requests from anyone blocked the owner's
reset for an hour, with an error page that confirmed the block.
"""

from __future__ import annotations

import hashlib

from django.conf import settings

from common.ratelimit import gap_claim, rate_limit_hit


def password_reset_mail_allowed(*, client: str, email: str) -> bool:
    """Whether this request (from ``client``, for ``email``) may send a reset mail now. Counts
    the request against the client, and claims the address's gap only when the client may ask:
    a client over its limit cannot hold back the owner's mail."""
    wait = rate_limit_hit(
        scope="password_reset", ident=client, rate=settings.THROTTLE_RATES["password_reset"]
    )
    if wait is not None:
        return False
    # Hashed, so the cache holds no addresses; lower case, as the form finds accounts by it.
    recipient = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return gap_claim(
        scope="password_reset_mail",
        ident=recipient,
        seconds=settings.PASSWORD_RESET_MAIL_GAP_SECONDS,
    )
