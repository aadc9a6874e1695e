"""The route table: every REST route is a ``Route`` in a domain's ``ROUTES`` list (its component
names the module).

A handler is a plain function ``handler(call, **path_params)``. It returns JSON-able data (sent
with the route's status), ``None`` (204), or a ready ``bottle.HTTPResponse`` (files, streams).
A route that checks a password or a code (a guessable secret) says so with ``checks_secret=True``.
Access is not declared per route: it comes from the one table in ``api/access.py``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from hausbox.api.access import Access, access_for
from hausbox.api.schema import BodyValidator, Schema

if TYPE_CHECKING:
    import bottle

    from hausbox.auth.principal import Principal
    from hausbox.engine import Engine

API_PREFIX = "/api/v1"


@dataclass
class Call:
    """What a handler gets: the engine, the caller, the validated body and the query string."""

    engine: "Engine"
    principal: "Principal | None"
    body: Any
    request: "bottle.BaseRequest"
    # Who the audit trail names when there is no principal yet (a login attempt, an MFA step):
    # set by the handler that learns it. Never a secret.
    audit_actor: str | None = None

    @property
    def query(self) -> "bottle.FormsDict":
        return self.request.query

    @property
    def actor(self) -> str | None:
        """The caller's username, for the log line of what they change (None when anonymous)."""
        return self.principal.username if self.principal else None


def client_address(request: "bottle.BaseRequest") -> str:
    """The address the request came from (the peer: hausbox is not behind a proxy)."""
    return request.environ.get("REMOTE_ADDR") or "?"


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: Callable[..., Any]
    body: Schema | None = None
    status: int = 200
    summary: str = ""
    max_body_bytes: int = 1 << 20
    # Checks a password or a code: every request counts against the caller's address and account
    # before its body is read, as login (auth/rate_limit.py); more than the limit is a 429.
    checks_secret: bool = False
    # Documentation only (the OpenAPI document): the success body's JSON Schema, whose
    # ``description`` describes the response, and the query parameters (OpenAPI parameter objects).
    response: Schema | None = None
    params: tuple[dict[str, Any], ...] = ()
    validator: BodyValidator | None = field(default=None, compare=False, repr=False)
    access: Access = field(init=False, compare=False)  # from the access table, once: read on every request

    def __post_init__(self) -> None:
        if self.body is not None and self.validator is None:
            object.__setattr__(self, "validator", BodyValidator(self.body))
        object.__setattr__(self, "access", access_for(self.method, self.path))

    @property
    def full_path(self) -> str:
        return API_PREFIX + self.path


def all_routes() -> list[Route]:
    """The ``ROUTES`` of every component (``core/components.py``), checked for duplicates."""
    from hausbox.core.components import discover

    routes: list[Route] = []
    for component in discover():
        if component.routes is not None:
            routes.extend(importlib.import_module(component.routes).ROUTES)
    seen: set[tuple[str, str]] = set()
    for route in routes:
        key = (route.method, route.path)
        if key in seen:
            raise RuntimeError(f"route declared twice: {route.method} {route.path}")
        seen.add(key)
    return routes
