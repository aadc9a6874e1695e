"""Who may call what: the one table of the spec's access rules (Authentication 1, 6 and 7).

The write barrier is closed by default: a POST, PUT, PATCH or DELETE is admin-only unless it is
listed in ``STANDARD_WRITES`` (or public). Reads are open to any authenticated user except the
admin-only groups. Paths are relative to ``/api/v1``; ``*`` stands for one path parameter and a
trailing ``/**`` for any deeper path.
"""

from __future__ import annotations

import re
from typing import Literal

Access = Literal["public", "user", "admin"]

PUBLIC: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/auth/status"),
        ("POST", "/auth/setup"),
        ("POST", "/auth/login"),
        ("POST", "/auth/mfa/verify"),  # the second step of a login (the spec leaves its shape open)
        ("POST", "/auth/refresh"),
        ("POST", "/auth/logout"),
        ("GET", "/health"),
        ("GET", "/plugins/*/oauth/callback"),
    }
)

# The allowlist of writes a standard user may make (spec, Authentication 7).
STANDARD_WRITES: frozenset[tuple[str, str]] = frozenset(
    {
        ("POST", "/equipments/*/orders/*"),
        ("POST", "/equipments/*/timed-action"),
        ("DELETE", "/equipments/*/timed-action"),
        ("POST", "/zones/*/orders/*"),
        ("POST", "/modes/*/activate"),
        ("POST", "/modes/*/deactivate"),
        ("POST", "/modes/*/apply-to-zone/*"),
        ("PUT", "/me"),
        ("PUT", "/me/preferences"),
        ("PUT", "/me/password"),
        ("POST", "/me/tokens"),
        ("DELETE", "/me/tokens/*"),
        ("POST", "/me/mfa/**"),
        ("DELETE", "/me/mfa/**"),
        ("POST", "/push/subscriptions"),
        ("DELETE", "/push/subscriptions"),
        ("POST", "/auth/logout"),
    }
)

# Reads reserved to administrators (spec, Authentication 6): first path segment, or exact path.
ADMIN_READ_GROUPS: frozenset[str] = frozenset(
    {"backup", "logs", "mqtt-brokers", "notification-publishers", "users", "audit", "integrations", "plugins"}
)
ADMIN_READ_PATHS: frozenset[str] = frozenset({"/settings"})

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_PARAM = re.compile(r"<[^>]+>")


def pattern_of(path: str) -> str:
    """``/equipments/<id>/orders/<alias>`` -> ``/equipments/*/orders/*``."""
    return _PARAM.sub("*", path)


def _listed(method: str, pattern: str, table: frozenset[tuple[str, str]]) -> bool:
    if (method, pattern) in table:
        return True
    return any(
        m == method and p.endswith("/**") and pattern.startswith(p[:-2]) for m, p in table
    )


def access_for(method: str, path: str) -> Access:
    """The access mark of a route, from its method and its path template."""
    pattern = pattern_of(path)
    if _listed(method, pattern, PUBLIC):
        return "public"
    if method in MUTATING:
        return "user" if _listed(method, pattern, STANDARD_WRITES) else "admin"
    first = pattern.strip("/").split("/", 1)[0]
    if first in ADMIN_READ_GROUPS or pattern in ADMIN_READ_PATHS:
        return "admin"
    return "user"
