"""Usernames a sign-up may not take: names that read as the site's own staff.

A student called "admin" or "Instructor_2" could message classmates, or answer in a forum, as
if they spoke for the course. Accounts that really are staff are made by management commands
(``demo_accounts``) or in the admin, never through sign-up, so they are not affected.
"""

from __future__ import annotations

import re
import unicodedata

MSG_USERNAME_RESERVED = (
    "This username is reserved because it looks like a staff account. Choose another one."
)

# Compared case-insensitively, ignoring digits and separators ("Admin_2", "s.t.a.f.f").
RESERVED_USERNAME_WORDS = frozenset(
    {
        "admin",
        "admins",
        "administrator",
        "administrators",
        "sysadmin",
        "root",
        "staff",
        "instructor",
        "instructors",
        "teacher",
        "teachers",
        "tutor",
        "grader",
        "support",
        "helpdesk",
        "moderator",
        "moderators",
        "mod",
        "superuser",
        "system",
        "security",
        "official",
        "webmaster",
        "postmaster",
        "hostmaster",
        "owner",
    }
)

# A word starts at a capital after a small letter ("TheAdmin") or after anything not a letter.
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")
_NOT_LETTERS = re.compile(r"[^a-z]+")


def username_is_reserved(username: str) -> bool:
    """Whether the name, or one of its words, is a reserved word once digits and separators
    are dropped: "admin", "ADMIN", "ad-min", "admin42", "the_admin" and "TheAdmin" are;
    "badminton" and "rootsy" are not (a word must be whole, so ordinary names stay free)."""
    normalised = unicodedata.normalize("NFKC", username)
    words = _NOT_LETTERS.split(_CAMEL_BOUNDARY.sub(" ", normalised).lower())
    joined = "".join(words)
    return joined in RESERVED_USERNAME_WORDS or any(w in RESERVED_USERNAME_WORDS for w in words)
