"""Routes: /modes (configuration is admin-only; activate, deactivate, apply-to-zone are [S]) and
/zones/:zoneId/mode-impacts."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import STRING, array, nullable, obj, one_of, text
from hausbox.modes.service import ACTION_TYPES, DESCRIPTION_MAX, NAME_MAX

MAX_ACTIONS = 200


def list_modes(call: Call) -> list[dict[str, Any]]:
    return call.engine.modes.all_json()


def get_mode(call: Call, id: str) -> dict[str, Any]:
    return call.engine.modes.get_json(id)


def create_mode(call: Call) -> dict[str, Any]:
    b = call.body
    return call.engine.modes.create(b["name"], b.get("icon"), b.get("description"))


def update_mode(call: Call, id: str) -> dict[str, Any]:
    return call.engine.modes.update(id, call.body)


def delete_mode(call: Call, id: str) -> None:
    call.engine.modes.delete(id)


def activate(call: Call, id: str) -> dict[str, Any]:
    call.engine.modes.activate(id)
    return {"ok": True, "active": True}


def deactivate(call: Call, id: str) -> dict[str, Any]:
    call.engine.modes.deactivate(id)
    return {"ok": True, "active": False}


def apply_to_zone(call: Call, id: str, zoneId: str) -> dict[str, Any]:
    return call.engine.modes.apply_to_zone(id, zoneId)


def set_impact(call: Call, id: str, zoneId: str) -> dict[str, Any]:
    return call.engine.modes.set_impact(id, zoneId, call.body["actions"])


def delete_impact(call: Call, id: str, zoneId: str) -> None:
    call.engine.modes.delete_impact(id, zoneId)


def triggers(call: Call, id: str) -> list[dict[str, Any]]:
    call.engine.modes.get(id)
    return call.engine.button_actions.triggers_of_mode(id)


def zone_mode_impacts(call: Call, zoneId: str) -> list[dict[str, Any]]:
    return call.engine.modes.zone_impacts_json(zoneId)


OPTIONAL_FIELDS = {"icon": nullable(STRING), "description": nullable(text(DESCRIPTION_MAX, min_length=0))}
# The shape of each action is checked here; what it names (equipment, order, instance) by the service.
IMPACT_ACTION = obj(required={"type": one_of(*ACTION_TYPES)})

ROUTES = [
    Route("GET", "/modes", list_modes, summary="All modes, with impacts and state"),
    Route("GET", "/modes/<id>", get_mode, summary="One mode with its impacts and state"),
    Route("POST", "/modes", create_mode, body=obj(required={"name": text(NAME_MAX)}, optional=OPTIONAL_FIELDS), status=201, summary="Create a mode"),
    Route("PUT", "/modes/<id>", update_mode, body=obj(optional={"name": text(NAME_MAX), **OPTIONAL_FIELDS}), summary="Update a mode"),
    Route("DELETE", "/modes/<id>", delete_mode, summary="Delete a mode and its impacts"),
    Route("POST", "/modes/<id>/activate", activate, summary="Activate a mode (applies its impacts; no-op when active)"),
    Route("POST", "/modes/<id>/deactivate", deactivate, summary="Deactivate a mode (reverts nothing; no-op when inactive)"),
    Route("POST", "/modes/<id>/apply-to-zone/<zoneId>", apply_to_zone, summary="Apply a mode's impact on one zone, state unchanged"),
    Route(
        "PUT",
        "/modes/<id>/impacts/<zoneId>",
        set_impact,
        body=obj(required={"actions": array(IMPACT_ACTION, maxItems=MAX_ACTIONS)}),
        summary="Set a mode's impact on a zone: order, recipe_toggle, recipe_params actions",
    ),
    Route("DELETE", "/modes/<id>/impacts/<zoneId>", delete_impact, summary="Remove a mode's impact on a zone"),
    Route("GET", "/modes/<id>/triggers", triggers, summary="Button bindings that trigger the mode"),
    Route("GET", "/zones/<zoneId>/mode-impacts", zone_mode_impacts, summary="Every mode's impact on a zone"),
]
