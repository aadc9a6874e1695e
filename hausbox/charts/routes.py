"""Routes: /charts."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import BOOLEAN, FREE_FORM_MAX_BYTES, STRING, nullable, obj, text
from hausbox.charts.service import NAME_MAX

# config is free-form; the members we know are checked when present.
SERIES = {"type": "object", "properties": {"color": nullable(STRING)}}
CONFIG = {"type": "object", "properties": {"series": {"type": "array", "items": SERIES}, "yAxisFit": BOOLEAN}}


def list_charts(call: Call) -> list[dict[str, Any]]:
    return call.engine.charts.list()


def get_chart(call: Call, id: str) -> dict[str, Any]:
    return call.engine.charts.get(id)


def create_chart(call: Call) -> dict[str, Any]:
    return call.engine.charts.create(call.body["name"], call.body["config"])


def update_chart(call: Call, id: str) -> dict[str, Any]:
    return call.engine.charts.update(id, call.body)


def delete_chart(call: Call, id: str) -> None:
    call.engine.charts.delete(id)


ROUTES = [
    Route("GET", "/charts", list_charts, summary="Saved charts"),
    Route("GET", "/charts/<id>", get_chart, summary="One saved chart"),
    Route("POST", "/charts", create_chart, body=obj(required={"name": text(NAME_MAX), "config": CONFIG}), status=201, summary="Save a chart", max_body_bytes=FREE_FORM_MAX_BYTES),
    Route("PUT", "/charts/<id>", update_chart, body=obj(optional={"name": text(NAME_MAX), "config": CONFIG}), summary="Update a saved chart", max_body_bytes=FREE_FORM_MAX_BYTES),
    Route("DELETE", "/charts/<id>", delete_chart, summary="Delete a saved chart"),
]
