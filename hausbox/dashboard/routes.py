"""Routes: /dashboard/widgets."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import FREE_FORM_MAX_BYTES, STRING, array, nullable, obj, one_of
from hausbox.dashboard.widgets import FAMILIES, ICON_MAX, LABEL_MAX, TYPES

OBJECT = {"type": "object"}
LABEL = nullable({"type": "string", "maxLength": LABEL_MAX})
ICON = nullable({"type": "string", "maxLength": ICON_MAX})


def list_widgets(call: Call) -> list[dict[str, Any]]:
    return call.engine.dashboard.list()


def create_widget(call: Call) -> dict[str, Any]:
    return call.engine.dashboard.create(call.body)


def update_widget(call: Call, id: str) -> dict[str, Any]:
    # No body at all reaches here as {} (as does a body of unknown fields only): nothing changes.
    return call.engine.dashboard.update(id, call.body or {})


def delete_widget(call: Call, id: str) -> None:
    call.engine.dashboard.delete(id)


def reorder_widgets(call: Call) -> dict[str, Any]:
    call.engine.dashboard.reorder(call.body["order"])
    return {"ok": True}


ROUTES = [
    Route("GET", "/dashboard/widgets", list_widgets, summary="Dashboard widgets in display order"),
    Route(
        "POST",
        "/dashboard/widgets",
        create_widget,
        body=obj(
            required={"type": one_of(*TYPES)},
            optional={
                "equipmentId": nullable(STRING),
                "zoneId": nullable(STRING),
                "family": nullable(one_of(*FAMILIES)),
                "label": LABEL,
                "icon": ICON,
                "config": nullable(OBJECT),
            },
        ),
        status=201,
        summary="Add a widget (an equipment, or a family of equipments in a zone)",
        max_body_bytes=FREE_FORM_MAX_BYTES,
    ),
    Route("PUT", "/dashboard/widgets/order", reorder_widgets, body=obj(required={"order": array(STRING)}), summary="Reorder the widgets (every id exactly once)"),
    Route(
        "PATCH",
        "/dashboard/widgets/<id>",
        update_widget,
        body=obj(optional={"label": LABEL, "icon": ICON, "config": nullable(OBJECT)}),
        summary="Change a widget's label, icon or config (no body: unchanged)",
        max_body_bytes=FREE_FORM_MAX_BYTES,
    ),
    Route("DELETE", "/dashboard/widgets/<id>", delete_widget, summary="Remove a widget"),
]
