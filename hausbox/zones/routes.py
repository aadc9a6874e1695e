"""Routes: /zones (the tree)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import INTEGER, STRING, array, nullable, obj, text
from hausbox.core.jsonenc import RawJson
from hausbox.zones.tree import DESCRIPTION_MAX, NAME_MAX


def tree(call: Call) -> RawJson:
    return RawJson(call.engine.zones.tree_bytes())


def get_zone(call: Call, id: str) -> dict[str, Any]:
    return call.engine.zones.get(id).to_json(depth=2)


def create_zone(call: Call) -> dict[str, Any]:
    b = call.body
    return call.engine.zones.create(b["name"], b.get("parentId"), b.get("icon"), b.get("description"), b.get("displayOrder"))


def update_zone(call: Call, id: str) -> dict[str, Any]:
    return call.engine.zones.update(id, call.body)


def delete_zone(call: Call, id: str) -> None:
    call.engine.zones.delete(id)


def reorder(call: Call) -> None:
    call.engine.zones.reorder(call.body["parentId"], call.body["orderedIds"])


ZONE_FIELDS = {
    "parentId": nullable(STRING),
    "icon": nullable(STRING),
    "description": nullable(text(DESCRIPTION_MAX, min_length=0)),
    "displayOrder": nullable(INTEGER),
}

ROUTES = [
    Route("GET", "/zones", tree, summary="The zone tree"),
    Route("PUT", "/zones/reorder", reorder, body=obj(required={"parentId": STRING, "orderedIds": array(STRING)}), summary="Reorder siblings"),
    Route("GET", "/zones/<id>", get_zone, summary="One zone with its children"),
    Route("POST", "/zones", create_zone, body=obj(required={"name": text(NAME_MAX)}, optional=ZONE_FIELDS), status=201, summary="Create a zone"),
    Route("PUT", "/zones/<id>", update_zone, body=obj(optional={"name": text(NAME_MAX), **ZONE_FIELDS}), summary="Update a zone"),
    Route("DELETE", "/zones/<id>", delete_zone, summary="Delete an empty leaf zone"),
]
