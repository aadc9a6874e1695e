"""Routes: the version, a forced version check, self-update and restart (see versions.py, update.py)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route

NULLABLE_TEXT = {"type": ["string", "null"]}
VERSION_RESPONSE = {
    "type": "object",
    "description": "current: this engine's version; latest, releaseUrl, notes: the newest release the feed announced (null before a "
    "successful check); updateAvailable: latest is a newer semver; feedUrl (admins only), lastCheck, lastError: the feed and how its last read went; "
    "held: why polling is held (shadow mode, an inert instance); dockerAvailable, composeManaged: this machine (a docker socket, a "
    "compose-managed container); selfUpdate: whether and how POST /system/update works here (method release-slots on the appliance, "
    "else the reason it is disabled); restart: the same for POST /system/restart; update: the attempt in progress",
    "required": ["current", "latest", "updateAvailable", "releaseUrl", "dockerAvailable", "composeManaged", "selfUpdate", "restart", "update"],
    "properties": {
        "current": {"type": "string"},
        "latest": NULLABLE_TEXT,
        "updateAvailable": {"type": "boolean"},
        "releaseUrl": NULLABLE_TEXT,
        "notes": NULLABLE_TEXT,
        "feedUrl": NULLABLE_TEXT,
        "lastCheck": NULLABLE_TEXT,
        "lastError": NULLABLE_TEXT,
        "held": {"type": "array", "items": {"type": "string"}},
        "dockerAvailable": {"type": "boolean"},
        "composeManaged": {"type": "boolean"},
        "selfUpdate": {
            "type": "object",
            "required": ["enabled", "method", "reason"],
            "properties": {"enabled": {"type": "boolean"}, "method": {"enum": ["release-slots", None]}, "reason": NULLABLE_TEXT},
        },
        "restart": {"type": "object", "required": ["enabled", "reason"], "properties": {"enabled": {"type": "boolean"}, "reason": NULLABLE_TEXT}},
        "update": {
            "type": "object",
            "required": ["running", "kind", "step", "message"],
            "properties": {"running": {"type": "boolean"}, "kind": {"enum": ["update", "restart", None]}, "step": NULLABLE_TEXT, "message": NULLABLE_TEXT},
        },
    },
}
STARTED_RESPONSE = {
    "type": "object",
    "description": "Started in the background: follow the events system.update.progress {step, message} and system.update.error {error}",
    "required": ["success", "message"],
    "properties": {"success": {"const": True}, "message": {"type": "string"}},
}


def version_info(call: Call) -> dict[str, Any]:
    info = {**call.engine.versions.json(), **call.engine.self_update.json()}
    if call.principal is None or not call.principal.is_admin:
        info["feedUrl"] = None  # it may carry a credential; the setting itself is admin-only too
    return info


def check_version(call: Call) -> dict[str, Any]:
    call.engine.versions.check()
    return version_info(call)


def start_update(call: Call) -> dict[str, Any]:
    return {"success": True, "message": call.engine.self_update.start_update()}


def restart(call: Call) -> dict[str, Any]:
    return {"success": True, "message": call.engine.self_update.start_restart()}


ROUTES = [
    Route("GET", "/system/version", version_info, summary="This version, the latest release, and whether self-update and restart work here", response=VERSION_RESPONSE),
    Route(
        "POST", "/system/version/check", check_version, response=VERSION_RESPONSE,
        summary="Poll the release feed now (429 with Retry-After within 10 s of the last check; held in shadow mode)",
    ),  # fmt: skip
    Route(
        "POST", "/system/update", start_update, status=202, response=STARTED_RESPONSE,
        summary="Start the self-update: backup, then the update helper (503 where disabled or no newer release is known, 409 while one runs)",
    ),  # fmt: skip
    Route(
        "POST", "/system/restart", restart, status=202, response=STARTED_RESPONSE,
        summary="Restart the service through the helper (503 off the appliance without HAUSBOX_RESTART_COMMAND, 409 while a helper runs)",
    ),  # fmt: skip
]
