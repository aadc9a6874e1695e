"""Routes: /integrations (admin)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route


def list_integrations(call: Call) -> list[dict[str, Any]]:
    return call.engine.integrations.list_json()


def start(call: Call, id: str) -> dict[str, Any]:
    return {"success": True, "status": call.engine.integrations.start(id, by=call.actor)}


def stop(call: Call, id: str) -> dict[str, Any]:
    return {"success": True, "status": call.engine.integrations.stop(id, by=call.actor)}


def restart(call: Call, id: str) -> dict[str, Any]:
    return {"success": True, "status": call.engine.integrations.restart(id, by=call.actor)}


def refresh(call: Call, id: str) -> dict[str, Any]:
    call.engine.integrations.refresh(id, by=call.actor)
    return {"success": True}


ROUTES = [
    Route("GET", "/integrations", list_integrations, summary="Every integration with status, settings (secrets masked), device counts"),
    Route("POST", "/integrations/<id>/start", start, summary="Start an integration"),
    Route("POST", "/integrations/<id>/stop", stop, summary="Stop an integration"),
    Route("POST", "/integrations/<id>/restart", restart, summary="Stop then start an integration"),
    Route("POST", "/integrations/<id>/refresh", refresh, summary="Forced refresh (polling integrations only)"),
]
