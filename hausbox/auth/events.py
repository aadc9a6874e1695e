"""The internal event of auth, with its payload."""

from typing import NotRequired, TypedDict

AUTH_REVOKED = "auth.revoked"


class AuthRevoked(TypedDict):
    userId: str
    keepSessionId: NotRequired[str]  # a password change: every other session of the user ends


EVENTS = {AUTH_REVOKED: AuthRevoked}
