"""Routes: /calendar (profiles, the active profile, slots). Writes are admin-only."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import STRING, array, obj, one_of, text
from hausbox.calendar.service import ACTIONS

MAX_MODE_ACTIONS = 50


def profiles(call: Call) -> list[dict[str, Any]]:
    return call.engine.calendar.profiles_json()


def get_active(call: Call) -> dict[str, Any]:
    return call.engine.calendar.active_json()


def set_active(call: Call) -> dict[str, Any]:
    return call.engine.calendar.set_active(call.body["profileId"])


def list_slots(call: Call, id: str) -> list[dict[str, Any]]:
    return call.engine.calendar.slots_json(id)


def create_slot(call: Call, id: str) -> dict[str, Any]:
    return call.engine.calendar.create_slot(id, call.body)


def update_slot(call: Call, slotId: str) -> dict[str, Any]:
    return call.engine.calendar.update_slot(slotId, call.body)


def delete_slot(call: Call, slotId: str) -> None:
    call.engine.calendar.delete_slot(slotId)


# Weekdays: 0 = Sunday .. 6 = Saturday, at least one, no repeats (the service names the faulty item).
DAYS = array({"type": "integer", "minimum": 0, "maximum": 6}, minItems=1, maxItems=7)
TIME = STRING  # "HH:MM", checked by the service
MODE_ACTIONS = array(obj(required={"modeId": text(), "action": one_of(*ACTIONS)}), maxItems=MAX_MODE_ACTIONS)
SLOT_FIELDS = {"days": DAYS, "time": TIME, "modeActions": MODE_ACTIONS}

ROUTES = [
    Route("GET", "/calendar/profiles", profiles, summary="Calendar profiles"),
    Route("GET", "/calendar/active", get_active, summary="The active profile with its slots"),
    Route("PUT", "/calendar/active", set_active, body=obj(required={"profileId": text()}), summary="Choose the active profile"),
    Route("GET", "/calendar/profiles/<id>/slots", list_slots, summary="A profile's slots, by time"),
    Route("POST", "/calendar/profiles/<id>/slots", create_slot, body=obj(required=SLOT_FIELDS), status=201, summary="Add a slot to a profile"),
    Route("PUT", "/calendar/slots/<slotId>", update_slot, body=obj(optional=SLOT_FIELDS), summary="Update a slot"),
    Route("DELETE", "/calendar/slots/<slotId>", delete_slot, summary="Remove a slot"),
]
