"""What a refused LTI request says, and its HTTP status (mapped in one place: lti.views)."""

from __future__ import annotations

MSG_PLATFORM_UNKNOWN = "This platform or client id is not registered with this tool."
MSG_TOKEN_INVALID = "The launch token is not valid (signature, audience or expiry)."  # noqa: S105
MSG_NONCE_INVALID = "The launch was already used or its nonce is missing."
MSG_STATE_INVALID = "The launch did not start here: its state is missing or unknown."
MSG_DEPLOYMENT_UNKNOWN = "This deployment is not registered, or not active, in this tool."
MSG_ROLE_UNKNOWN = "Your role in this course, as the platform sends it, is not one this tool knows."
MSG_LAUNCH_INVALID = "The launch request is not a valid LTI 1.3 message."
MSG_DEEP_LINK_STAFF_ONLY = "Only instructors of the course can add an assignment from here."
MSG_NO_LAUNCH = "This page opens from a launch in your learning platform."
MSG_NO_ASSIGNMENT = "No assignment is tied to this link yet: ask your instructor."


class LtiRefused(Exception):
    """A request refused before anything was written."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class GradeSendFailed(Exception):
    """The platform refused or did not answer a score; the text is the platform's own."""
