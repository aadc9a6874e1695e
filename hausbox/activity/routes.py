"""Routes: /activity."""

from __future__ import annotations

from typing import Any

from hausbox.activity.feed import DEFAULT_LIMIT, MAX_LIMIT
from hausbox.api.query import bool_param, int_param
from hausbox.api.routing import Call, Route


def list_activity(call: Call) -> dict[str, Any]:
    query = call.query
    zone_id = query.get("zoneId") or None
    include_descendants = bool_param(query, "includeDescendants", True)
    limit = int_param(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    return {"items": call.engine.activity.query(zone_id, include_descendants, limit)}


ROUTES = [
    Route("GET", "/activity", list_activity, summary="The activity feed, newest first (zoneId, includeDescendants, limit)"),
]
