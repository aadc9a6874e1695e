"""Routes: /equipments/:id/action-bindings (admin-only writes)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import obj, one_of, text
from hausbox.buttons.service import EFFECT_TYPES

ACTION_VALUE_MAX = 100


def list_bindings(call: Call, id: str) -> list[dict[str, Any]]:
    return call.engine.button_actions.list_json(id)


def create_binding(call: Call, id: str) -> dict[str, Any]:
    return call.engine.button_actions.create(id, call.body)


def update_binding(call: Call, id: str, bindingId: str) -> dict[str, Any]:
    return call.engine.button_actions.update(id, bindingId, call.body)


def delete_binding(call: Call, id: str, bindingId: str) -> None:
    call.engine.button_actions.delete(id, bindingId)


# config's fields depend on effectType: the service checks them and names the faulty one.
FIELDS = {"actionValue": text(ACTION_VALUE_MAX), "effectType": one_of(*EFFECT_TYPES), "config": {"type": "object"}}

ROUTES = [
    Route("GET", "/equipments/<id>/action-bindings", list_bindings, summary="A button's action bindings"),
    Route(
        "POST",
        "/equipments/<id>/action-bindings",
        create_binding,
        body=obj(required=FIELDS),
        status=201,
        summary="Bind a button action value to an effect",
    ),
    Route("PUT", "/equipments/<id>/action-bindings/<bindingId>", update_binding, body=obj(optional=FIELDS), summary="Update an action binding"),
    Route("DELETE", "/equipments/<id>/action-bindings/<bindingId>", delete_binding, summary="Remove an action binding"),
]
