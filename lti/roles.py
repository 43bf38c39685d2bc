"""The platform's roles (LTI 1.3 context roles) as this site's course roles; pure."""

from __future__ import annotations

from collections.abc import Iterable

from courses.models import Membership

_MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
INSTRUCTOR = f"{_MEMBERSHIP}#Instructor"
TEACHING_ASSISTANT = f"{_MEMBERSHIP}/Instructor#TeachingAssistant"
LEARNER = f"{_MEMBERSHIP}#Learner"

# A teaching assistant is also sent as an Instructor by some platforms: the narrower role wins.
_PRECEDENCE: tuple[tuple[str, Membership.Role], ...] = (
    (TEACHING_ASSISTANT, Membership.Role.TEACHING_ASSISTANT),
    (INSTRUCTOR, Membership.Role.INSTRUCTOR),
    (LEARNER, Membership.Role.STUDENT),
)
# Short forms the spec allows for context roles ("Instructor" for membership#Instructor).
_SHORT = {"Instructor": INSTRUCTOR, "Learner": LEARNER, "TeachingAssistant": TEACHING_ASSISTANT}


def course_role_for(roles: Iterable[str]) -> Membership.Role | None:
    """The course role for a launch's or a roster's role URIs; None if none is known here."""
    given = {_SHORT.get(role, role) for role in roles}
    for uri, role in _PRECEDENCE:
        if uri in given:
            return role
    return None
