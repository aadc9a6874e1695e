"""The OpenAPI 3 document, generated from the route table and its body schemas."""

from __future__ import annotations

import re
from typing import Any

from hausbox import __version__
from hausbox.api.middleware import BEARER_PROTOCOL_PREFIX, WEBSOCKET_PROTOCOL
from hausbox.api.routing import Route

_PARAM = re.compile(r"<([^>:]+)(?::[^>]*)?>")


def openapi_path(route: Route) -> str:
    return _PARAM.sub(r"{\1}", route.full_path)


def _success(route: Route) -> dict[str, Any]:
    """The success response, from the handler's return annotation: None is 204 without a body,
    Any a response the handler builds itself (a camera's image or stream), anything else JSON."""
    returns = getattr(route.handler, "__annotations__", {}).get("return")  # text: the route modules defer annotations
    if returns == "None":
        return {"204": {"description": "Done (no body)"}}
    if returns == "Any":
        return {str(route.status): {"description": "Success"}}
    schema = route.response or {}
    return {str(route.status): {"description": schema.get("description", "Success"), "content": {"application/json": {"schema": schema}}}}


def _operation(route: Route) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": f"{route.method.lower()}_{route.handler.__module__.split('.')[-2]}_{route.handler.__name__}",
        "summary": route.summary,
        "x-access": route.access,
        "parameters": [
            *({"name": name, "in": "path", "required": True, "schema": {"type": "string"}} for name in _PARAM.findall(route.path)),
            *route.params,
        ],
        "responses": {
            **_success(route),
            "400": {"description": "Invalid input", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    }
    if route.access != "public":
        op["security"] = [{"bearer": []}]
        op["responses"]["401"] = {"description": "Missing or invalid credential"}
    if route.access == "admin":
        op["responses"]["403"] = {"description": "Admin access required"}
    if route.checks_secret:
        op["responses"]["429"] = {
            "description": "Too many attempts from this address or at this account",
            "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
        }
    if route.body is not None:
        op["requestBody"] = {"required": False, "content": {"application/json": {"schema": route.body}}}
    return op


# OpenAPI has no WebSocket operation: the endpoint is described beside the paths.
WEBSOCKET = {
    "path": "/ws",
    "description": (
        "Events (spec: Events). Credential: `?token=<access token or API token>`, or, for browsers that cannot "
        f"set headers, the subprotocols `{WEBSOCKET_PROTOCOL}` and `{BEARER_PROTOCOL_PREFIX}<token>` "
        f"(`new WebSocket(url, ['{WEBSOCKET_PROTOCOL}', '{BEARER_PROTOCOL_PREFIX}' + token])`); the server answers "
        f"`Sec-WebSocket-Protocol: {WEBSOCKET_PROTOCOL}`. A browser's Origin must be the box itself or allowed by "
        "`http.corsOrigins` (localhost when unset). Refusals close the socket before the welcome: 4001 invalid "
        "credential, 4003 origin not allowed; 1008 a client too slow to read its events."
    ),
    "closeCodes": {"4001": "Invalid token", "4003": "Origin not allowed", "1008": "Too slow: event backlog exceeded", "1001": "Server shutting down"},
}


def build_document(routes: list[Route]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(openapi_path(route), {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "hausbox API", "version": __version__},
        "x-websocket": WEBSOCKET,
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "JWT access token or hbx_ API token"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {"error": {"type": "string"}, "code": {"type": "string"}},
                    "required": ["error"],
                }
            },
        },
    }
