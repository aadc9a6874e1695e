"""Routes: /audit (administrators only, from the access table)."""

from __future__ import annotations

from typing import Any

from hausbox.api.access import MUTATING
from hausbox.api.query import int_param
from hausbox.api.routing import Call, Route
from hausbox.api.schema import STRING, Schema, array, nullable, obj, one_of
from hausbox.audit import store
from hausbox.audit.entry import OUTCOMES
from hausbox.core.clock import parse_iso
from hausbox.core.errors import BadRequest

DEFAULT_LIMIT, MAX_LIMIT = 100, 500


def _instant(query: Any, name: str) -> int | None:
    """``from``/``to``: ms since the epoch or an ISO 8601 instant."""
    raw = (query.get(name) or "").strip()
    if not raw:
        return None
    try:
        return store.sql_int(raw) if raw.lstrip("-").isdigit() else parse_iso(raw)
    except (ValueError, OverflowError):
        raise BadRequest(f"{name} must be an ISO 8601 instant or milliseconds since the epoch")


def _choice(query: Any, name: str, allowed: Any, upper: bool = False) -> str | None:
    raw = query.get(name) or None
    if raw is None:
        return None
    value = raw.upper() if upper else raw
    if value not in allowed:
        raise BadRequest(f"{name} must be one of {', '.join(sorted(allowed))}")
    return value


def filters(query: Any) -> list[tuple[str, Any]]:
    """``(SQL condition, value)`` for each filter the query string sets; BadRequest for a bad one."""
    found: list[tuple[str, Any]] = []
    user = query.get("user") or None
    if user is not None:
        found.append(("(username = ? OR user_id = ?)", user))  # one value for both
    for column, value in (
        ("action", query.get("action") or None),
        ("outcome", _choice(query, "outcome", OUTCOMES)),
        ("method", _choice(query, "method", MUTATING, upper=True)),
    ):
        if value is not None:
            found.append((f"{column} = ?", value))
    start, end = _instant(query, "from"), _instant(query, "to")
    if start is not None:
        found.append(("ts >= ?", start))
    if end is not None:
        found.append(("ts < ?", end))
    return found


def list_audit(call: Call) -> dict[str, Any]:
    query = call.query
    limit = int_param(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT, clamp=False)
    cursor = None
    if query.get("cursor"):
        try:
            cursor = store.decode_cursor(query.get("cursor"))
        except ValueError:
            raise BadRequest("cursor is not one this route gave")
    entries, next_cursor = store.page(call.engine.db, filters(query), cursor, limit)
    return {"entries": entries, "nextCursor": next_cursor}


NULLABLE_STRING = nullable(STRING)
ENTRY: Schema = obj(
    {
        "id": {"type": "integer"},
        "ts": {"type": "integer", "description": "ms since the epoch"},
        "time": {"type": "string", "description": "the same instant, ISO 8601 in UTC"},
        "userId": NULLABLE_STRING,
        "username": {**NULLABLE_STRING, "description": "the caller, or the name an anonymous sign-in attempt gave"},
        "role": nullable(one_of("admin", "standard")),
        "credential": {**nullable(one_of("jwt", "api_token")), "description": "null when anonymous"},
        "method": one_of(*sorted(MUTATING)),
        "route": {**NULLABLE_STRING, "description": "the route template, e.g. /zones/<id>; null when no route matched"},
        "action": {**NULLABLE_STRING, "description": "method and pattern as the access table spells it, e.g. PUT /zones/*"},
        "target": {"anyOf": [{"type": "object", "additionalProperties": STRING}, {"type": "null"}], "description": "the path parameters"},
        "outcome": one_of(*OUTCOMES),
        "status": {"type": "integer"},
        "address": NULLABLE_STRING,
        "userAgent": NULLABLE_STRING,
    },
    additionalProperties=False,
)
PAGE: Schema = obj(
    {"entries": array(ENTRY), "nextCursor": {**NULLABLE_STRING, "description": "pass as cursor for the next page; null on the last"}},
    additionalProperties=False,
    description="Audit entries, newest first",
)


def _param(name: str, description: str, schema: Schema = STRING) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema}


PARAMS = (
    _param("limit", f"entries per page, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}),
    _param("cursor", "the nextCursor of the previous page"),
    _param("user", "a username or a user id"),
    _param("action", "an action, e.g. PUT /zones/*"),
    _param("outcome", "how the request ended", one_of(*OUTCOMES)),
    _param("method", "the HTTP method", one_of(*sorted(MUTATING))),
    _param("from", "entries at or after this instant (ISO 8601 or ms)"),
    _param("to", "entries before this instant (ISO 8601 or ms)"),
)

ROUTES = [
    Route(
        "GET", "/audit", list_audit, response=PAGE, params=PARAMS,
        summary="The audit trail: mutating requests and sign-in attempts, newest first, a page at a time (365 days kept)",
    ),  # fmt: skip
]
