"""Routes: /energy/status and /settings/energy/tariff."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import FREE_FORM_MAX_BYTES
from hausbox.energy.service import energy_status
from hausbox.energy.tariff import TARIFF_BODY


def get_status(call: Call) -> dict[str, Any]:
    return energy_status(call.engine)


def get_tariff(call: Call) -> dict[str, Any]:
    return call.engine.tariff.current


def put_tariff(call: Call) -> dict[str, Any]:
    call.engine.tariff.replace(call.body, by=call.actor)
    return {"ok": True}


ROUTES = [
    Route("GET", "/energy/status", get_status, summary="Energy availability, sources and whether a tariff is configured"),
    Route("GET", "/settings/energy/tariff", get_tariff, summary="The peak/off-peak tariff (schedules and prices)"),
    Route("PUT", "/settings/energy/tariff", put_tariff, body=TARIFF_BODY, summary="Replace the peak/off-peak tariff", max_body_bytes=FREE_FORM_MAX_BYTES),
]
