"""Routes: /equipments (CRUD, bindings, orders)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import ANY, BOOLEAN, FREE_FORM_MAX_BYTES, STRING, all_or_none, array, nullable, obj, text
from hausbox.equipments.manager import DESCRIPTION_MAX, NAME_MAX
from hausbox.equipments.timed_command import MAX_DURATION_MS, MIN_DURATION_MS


def list_equipments(call: Call) -> list[dict[str, Any]]:
    return call.engine.equipments_view.list_json(call.query.get("type"), call.query.get("role"))


def get_equipment(call: Call, id: str) -> dict[str, Any]:
    manager = call.engine.equipments
    return manager.to_json(manager.require(id))


def create_equipment(call: Call) -> dict[str, Any]:
    b = call.body
    return call.engine.equipments.create(b["name"], b["type"], b["zoneId"], b.get("icon"), b.get("description"), b.get("deviceIds"))


def update_equipment(call: Call, id: str) -> dict[str, Any]:
    return call.engine.equipments.update(id, call.body)


def delete_equipment(call: Call, id: str) -> None:
    call.engine.equipments.delete(id)


def execute_order(call: Call, id: str, alias: str) -> dict[str, Any]:
    source = {"kind": "manual", "userId": call.principal.user_id}
    return call.engine.orders.execute(id, alias, call.body["value"], source)


def add_data_binding(call: Call, id: str) -> dict[str, Any]:
    return call.engine.equipments.add_data_binding(id, call.body["deviceDataId"], call.body["alias"])


def remove_data_binding(call: Call, id: str, bindingId: str) -> None:
    call.engine.equipments.remove_data_binding(id, bindingId)


def add_order_binding(call: Call, id: str) -> dict[str, Any]:
    return call.engine.equipments.add_order_binding(id, call.body["deviceOrderId"], call.body["alias"])


def remove_order_binding(call: Call, id: str, bindingId: str) -> None:
    call.engine.equipments.remove_order_binding(id, bindingId)


def camera_snapshot(call: Call, id: str) -> Any:
    return call.engine.camera.snapshot(id)


def camera_stream(call: Call, id: str) -> Any:
    return call.engine.camera.stream(id)


def arm_timed_action(call: Call, id: str) -> dict[str, Any]:
    return call.engine.timed_actions.arm(id, call.body, call.principal.user_id)


def end_timed_action(call: Call, id: str) -> None:
    revert = (call.query.get("revert") or "").strip().lower() in ("true", "1")
    call.engine.timed_actions.disarm(id, revert=revert, user_id=call.principal.user_id)


# All four fields, or none of them to arm the configured timedCommand (the spec's body).
TIMED_ACTION = obj(
    optional={
        "alias": text(64), "value": nullable(STRING), "revertValue": nullable(STRING),
        "durationMs": {"type": "integer", "minimum": MIN_DURATION_MS, "maximum": MAX_DURATION_MS},
    },
    **all_or_none("alias", "value", "revertValue", "durationMs"),
)  # fmt: skip


TIMED_COMMAND = nullable({"type": "object"})
OPTIONAL_FIELDS = {"icon": nullable(STRING), "description": nullable(text(DESCRIPTION_MAX, min_length=0))}

ROUTES = [
    Route("GET", "/equipments", list_equipments, summary="Equipments with bindings and data (?type=, ?role=submeter)"),
    Route("GET", "/equipments/<id>", get_equipment, summary="One equipment"),
    Route(
        "POST",
        "/equipments",
        create_equipment,
        body=obj(required={"name": text(NAME_MAX), "type": STRING, "zoneId": STRING}, optional={**OPTIONAL_FIELDS, "deviceIds": array(STRING)}),
        status=201,
        summary="Create an equipment (deviceIds: bind every datum and order of those devices)",
    ),
    Route(
        "PUT",
        "/equipments/<id>",
        update_equipment,
        body=obj(
            optional={
                "name": text(NAME_MAX), "type": STRING, "zoneId": STRING, **OPTIONAL_FIELDS, "enabled": BOOLEAN,
                "timedCommand": TIMED_COMMAND, "separateSupply": BOOLEAN, "requireConfirmation": BOOLEAN,
            }  # fmt: skip
        ),
        summary="Update an equipment",
    ),
    Route("DELETE", "/equipments/<id>", delete_equipment, summary="Delete an equipment (and its armed timed action)"),
    Route("POST", "/equipments/<id>/orders/<alias>", execute_order, body=obj(required={"value": ANY}), summary="Execute an order", max_body_bytes=FREE_FORM_MAX_BYTES),
    Route(
        "POST",
        "/equipments/<id>/data-bindings",
        add_data_binding,
        body=obj(required={"deviceDataId": STRING, "alias": text(64)}),
        status=201,
        summary="Bind a device datum under an alias",
    ),
    Route("DELETE", "/equipments/<id>/data-bindings/<bindingId>", remove_data_binding, summary="Remove a data binding"),
    Route(
        "POST",
        "/equipments/<id>/order-bindings",
        add_order_binding,
        body=obj(required={"deviceOrderId": STRING, "alias": text(64)}),
        status=201,
        summary="Bind a device order under an alias",
    ),
    Route("DELETE", "/equipments/<id>/order-bindings/<bindingId>", remove_order_binding, summary="Remove an order binding"),
    Route("GET", "/equipments/<id>/camera/snapshot", camera_snapshot, summary="Current camera frame, proxied (needs a snapshot_url binding)"),
    Route("GET", "/equipments/<id>/camera/stream", camera_stream, summary="Live camera stream, proxied (needs a stream_url binding)"),
    Route(
        "POST",
        "/equipments/<id>/timed-action",
        arm_timed_action,
        body=TIMED_ACTION,
        summary="Arm a timed action ({} for the configured timedCommand): sent now, reverted at expiry",
    ),
    Route("DELETE", "/equipments/<id>/timed-action", end_timed_action, summary="End the armed timed action (?revert=true sends the revert now)"),
]
