"""Routes: /devices."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import STRING, nullable, obj, text
from hausbox.core.errors import BadRequest
from hausbox.core.jsonenc import RawJson


def list_devices(call: Call) -> RawJson:
    return RawJson(call.engine.devices.list_bytes())


def get_device(call: Call, id: str) -> dict[str, Any]:
    return call.engine.devices.require(id).to_json()


def update_device(call: Call, id: str) -> dict[str, Any]:
    body = call.body
    return call.engine.devices.update(id, name=body.get("name"), zone_id=body["zoneId"] if "zoneId" in body else ...)


def delete_device(call: Call, id: str) -> None:
    call.engine.devices.delete(id)


def raw_expose(call: Call, id: str) -> dict[str, Any]:
    return call.engine.devices.raw(id)


def suggest(call: Call) -> list[dict[str, Any]]:
    equipment_type = call.query.get("type")
    if not equipment_type:
        raise BadRequest("type is required")
    return call.engine.equipments.suggest_devices(equipment_type)


def battery_alerts(call: Call) -> list[dict[str, Any]]:
    return call.engine.battery.alerts_json()


ROUTES = [
    Route("GET", "/devices", list_devices, summary="All devices with current data and orders"),
    Route("GET", "/devices/suggest", suggest, summary="Devices compatible with an equipment type (?type=)"),
    Route("GET", "/devices/battery-alerts", battery_alerts, summary="Active low-battery alerts"),
    Route("GET", "/devices/<id>", get_device, summary="One device with data and orders"),
    Route("PUT", "/devices/<id>", update_device, body=obj(optional={"name": text(100), "zoneId": nullable(STRING)}), summary="Rename a device or place it in a zone"),
    Route("DELETE", "/devices/<id>", delete_device, summary="Forget a device"),
    Route("GET", "/devices/<id>/raw", raw_expose, summary="The raw integration expose data"),
]
