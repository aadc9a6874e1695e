"""Routes: /history/status (the rest of the spec's /history routes come with the tiers)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route


def get_status(call: Call) -> dict[str, Any]:
    return call.engine.history.status()


ROUTES = [
    Route("GET", "/history/status", get_status, summary="The history store's state, historized bindings and 24 h write statistics"),
]
