"""One audit entry: what a finished request tells, reduced to a small tuple on the request path.

Nothing of a body is kept but the ``username`` an anonymous ``/auth/`` request names (a login's
tried account); never a password, a code, a token or any other value. The action is the method and
the route's pattern, spelled as the access table spells it (``PUT /zones/*``): one name per route,
derived, so that every route has one and no list can drift from the route table.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, NamedTuple

from hausbox.api.access import pattern_of

if TYPE_CHECKING:
    from hausbox.auth.principal import Principal

OUTCOMES = ("success", "failure", "denied", "rate_limited", "error", "mfa_required")
AUTH_PREFIX = "/auth/"
MAX_NAME = 64  # a username's bound (the login schema's)
MAX_AGENT = 200
MAX_PARAM = 200  # path parameters come from the caller: bounded


class Row(NamedTuple):
    """The columns of ``audit_entries`` but the id, in order."""

    ts: int
    user_id: str | None
    username: str | None
    role: str | None
    credential: str | None
    method: str
    route: str | None
    action: str | None
    target: dict[str, str] | None  # encoded by the writer, off the request path
    outcome: str
    status: int
    address: str | None
    user_agent: str | None


@functools.lru_cache(maxsize=1024)
def action_of(method: str, path: str) -> str:
    """``("PUT", "/zones/<id>")`` -> ``"PUT /zones/*"``."""
    return f"{method} {pattern_of(path)}"


def outcome_of(status: int, path: str | None, result: Any, checked: bool) -> str:
    """How a request ended. ``checked``: the caller passed the credential check (or needed none),
    so a 401 then means a password or code the handler checked was wrong: a failed attempt, not a
    refused access. A sign-in route's 200 whose body asks for MFA is the challenge step."""
    if 200 <= status < 300:
        sign_in = path is not None and path.startswith(AUTH_PREFIX)
        return "mfa_required" if sign_in and isinstance(result, dict) and result.get("mfaRequired") else "success"
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "error"
    if status == 403 or (status == 401 and not checked):
        return "denied"
    return "failure"


def tried_name(path: str, body: Any, actor: str | None) -> str | None:
    """The name an attempt gave before there is a principal: what the handler set, else the
    ``username`` of an ``/auth/`` body. Nothing else of a body, ever."""
    if actor is None and path.startswith(AUTH_PREFIX) and isinstance(body, dict):
        actor = body.get("username")
    return actor[:MAX_NAME] if isinstance(actor, str) else None


def who(principal: "Principal | None", name: str | None) -> tuple[str | None, str | None, str | None, str | None]:
    """``(user id, username, role, credential kind)``: the principal's, unless the attempt named
    someone else (a login while signed in as another user names the tried account alone)."""
    if principal is not None and (name is None or name == principal.username):
        return principal.user_id, principal.username, principal.role, principal.kind
    return None, name, None, None


def target_of(params: dict[str, str]) -> dict[str, str] | None:
    return {name: value[:MAX_PARAM] for name, value in params.items()} or None


def agent_of(environ: dict[str, Any]) -> str | None:
    agent = environ.get("HTTP_USER_AGENT")
    return agent[:MAX_AGENT] if agent else None
