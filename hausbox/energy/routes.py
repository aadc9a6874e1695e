"""Routes: /energy (status, history, by-usage, arbiter metrics) and /settings/energy/tariff."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import FREE_FORM_MAX_BYTES
from hausbox.energy import schemas
from hausbox.energy.service import arbiter_metrics, energy_by_usage, energy_history, energy_status
from hausbox.energy.tariff import TARIFF_BODY


def get_status(call: Call) -> dict[str, Any]:
    return energy_status(call.engine)


def get_history(call: Call) -> dict[str, Any]:
    return energy_history(call.engine, call.query)


def get_by_usage(call: Call) -> dict[str, Any]:
    return energy_by_usage(call.engine, call.query)


def get_arbiter_metrics(call: Call) -> dict[str, Any]:
    return arbiter_metrics(call.engine)


def get_tariff(call: Call) -> dict[str, Any]:
    return call.engine.tariff.current


def put_tariff(call: Call) -> dict[str, Any]:
    call.engine.tariff.replace(call.body, by=call.actor)
    return {"ok": True}


ROUTES = [
    Route("GET", "/energy/status", get_status, summary="Energy availability, sources and whether a tariff is configured", response=schemas.STATUS),
    Route("GET", "/energy/history", get_history, summary="Consumption, production and costs per calendar bucket (?period=day|week|month|year&date=YYYY-MM-DD)",
          response=schemas.HISTORY, params=schemas.PERIOD_PARAMS),  # fmt: skip
    Route("GET", "/energy/by-usage", get_by_usage, summary="Consumption and costs per submeter and the residual other (same query as /energy/history)",
          response=schemas.BY_USAGE, params=schemas.PERIOD_PARAMS),  # fmt: skip
    Route("GET", "/energy/arbiter/metrics", get_arbiter_metrics, summary="The baseline arbiter's decisions per energy binding", response=schemas.ARBITER),
    Route("GET", "/settings/energy/tariff", get_tariff, summary="The peak/off-peak tariff (schedules and prices)"),
    Route("PUT", "/settings/energy/tariff", put_tariff, body=TARIFF_BODY, summary="Replace the peak/off-peak tariff", max_body_bytes=FREE_FORM_MAX_BYTES),
]
