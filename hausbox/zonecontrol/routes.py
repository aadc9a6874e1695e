"""Routes: /zones/aggregation and /zones/:id/orders/:orderKey."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import obj
from hausbox.core.jsonenc import RawJson


def aggregation(call: Call) -> RawJson:
    return RawJson(call.engine.aggregator.all_bytes())


def zone_order(call: Call, id: str, orderKey: str) -> dict[str, Any]:
    source = {"kind": "manual", "userId": call.principal.user_id}
    return call.engine.zone_orders.execute(id, orderKey, call.body.get("value"), source)


ROUTES = [
    Route("GET", "/zones/aggregation", aggregation, summary="Aggregated data of every zone"),
    Route("POST", "/zones/<id>/orders/<orderKey>", zone_order, body=obj(optional={"value": {}}), summary="A zone-level order over the zone and its descendants"),
]
