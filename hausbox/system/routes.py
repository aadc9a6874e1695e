"""Routes: health, settings, logs, time zone, run mode and the OpenAPI document."""

from __future__ import annotations

import logging
from typing import Any

from hausbox.api.openapi import build_document
from hausbox.api.query import int_param
from hausbox.api.routing import Call, Route, all_routes
from hausbox.api.schema import FREE_FORM_MAX_BYTES, obj, one_of
from hausbox.core.clock import parse_iso
from hausbox.core.errors import BadRequest, Conflict
from hausbox.core.logs import LEVELS, RING_CAPACITY
from hausbox.system import identity

log = logging.getLogger("hausbox.system-routes")


def health(call: Call) -> dict[str, Any]:
    return call.engine.health.report(detailed=call.principal is not None)


def get_settings(call: Call) -> dict[str, Any]:
    return call.engine.settings.all()


def put_settings(call: Call) -> dict[str, Any]:
    keys = call.engine.settings.set_many(call.body, by=call.actor)
    return {"success": True, "changed": keys}


def get_logs(call: Call) -> dict[str, Any]:
    q = call.query
    level = q.get("level") or None
    if level is not None and level not in LEVELS:
        raise BadRequest(f"level must be one of {', '.join(LEVELS)}")
    since = q.get("since") or None
    if since is not None:
        try:
            parse_iso(since)
        except ValueError:
            raise BadRequest("since must be an ISO 8601 timestamp")
    ring = call.engine.log_ring
    entries = ring.query(
        limit=int_param(q, "limit", 100, 1, RING_CAPACITY),
        level=level,
        module=q.get("module") or None,
        search=q.get("search") or None,
        since=since,
    )
    return {
        "entries": entries,
        "total": len(entries),
        "capacity": ring.capacity,
        "currentLevel": ring.runtime_level,
        "modules": ring.modules(),
    }


def get_log_level(call: Call) -> dict[str, Any]:
    return {"level": call.engine.log_ring.runtime_level}


def put_log_level(call: Call) -> dict[str, Any]:
    previous = call.engine.log_ring.set_runtime_level(call.body["level"], by=call.actor)
    return {"level": call.body["level"], "previous": previous}


def get_timezone(call: Call) -> dict[str, Any]:
    return call.engine.zone_choice.json(call.engine.clock.now_ms())


def get_mode(call: Call) -> dict[str, Any]:
    return {**call.engine.identity.json(), "held": call.engine.workers.gate.reasons}


def get_alarms(call: Call) -> dict[str, Any]:
    return {"alarms": call.engine.alarms.active()}


def post_takeover(call: Call) -> dict[str, Any]:
    engine = call.engine
    if engine.identity.shadow:
        raise Conflict("A shadow instance is a copy of production and never takes over its database")
    if not engine.identity.takeover_pending:
        raise Conflict("No takeover is pending: this instance already owns its database")
    identity.confirm_takeover(engine.identity, engine.db, engine.clock.now_ms())
    log.warning("takeover confirmed by %s", call.actor)
    return get_mode(call)


def openapi(call: Call) -> dict[str, Any]:
    return build_document(all_routes())


SETTING_KEY = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"^[A-Za-z0-9_.:-]+$"}
SETTINGS_BODY = {
    "type": "object",
    "propertyNames": SETTING_KEY,
    "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
}

ALARMS_RESPONSE = {
    "type": "object",
    "description": "{alarms: [{alarmId, level (info, warning, error), source, message, raisedAt}]}, as system.alarm.raised announced them",
    "required": ["alarms"],
    "properties": {"alarms": {"type": "array", "items": {"type": "object", "required": ["alarmId", "level", "source", "message", "raisedAt"]}}},
}

MODE_RESPONSE = {
    "type": "object",
    "description": "mode: normal, inert (the database was restored from another instance: outbound subsystems held until the takeover) "
    "or shadow (SERVICE_SHADOW_MODE=1: a safe copy, always pending, never taken over); banner: ask an administrator to confirm "
    "the takeover; instanceId: this deployment (never in a backup); databaseInstanceId: the deployment the database belongs to; "
    "restartRequired: a takeover was confirmed and applies at the next start; held: why outbound subsystems are off",
    "required": ["mode", "takeoverPending", "banner", "instanceId", "databaseInstanceId", "restartRequired", "held"],
    "properties": {
        "mode": {"enum": ["normal", "inert", "shadow"]},
        "takeoverPending": {"type": "boolean"},
        "banner": {"type": "boolean"},
        "instanceId": {"type": "string"},
        "databaseInstanceId": {"type": "string"},
        "restartRequired": {"type": "boolean"},
        "held": {"type": "array", "items": {"type": "string"}},
    },
}

ROUTES = [
    Route("GET", "/health", health, summary="Liveness; integrations, devices and version for an authenticated caller"),
    Route("GET", "/settings", get_settings, summary="All settings (flat key to value)"),
    Route("PUT", "/settings", put_settings, body=SETTINGS_BODY, summary="Set settings; a null value deletes the key", max_body_bytes=FREE_FORM_MAX_BYTES),
    Route("GET", "/logs", get_logs, summary="Recent log entries from the in-memory ring buffer"),
    Route("GET", "/logs/level", get_log_level, summary="Runtime level of the ring buffer"),
    Route("PUT", "/logs/level", put_log_level, body=obj(required={"level": one_of(*LEVELS)}), summary="Set the ring buffer's level"),
    Route("GET", "/system/timezone", get_timezone, summary="The home's time zone: {tz, source (env, location, default), offsetHours}"),
    Route("GET", "/system/alarms", get_alarms, summary="The system alarms active now (a client opened after one was raised sees it)", response=ALARMS_RESPONSE),
    Route("GET", "/system/mode", get_mode, summary="Run mode and instance identity", response=MODE_RESPONSE),
    Route("POST", "/system/mode/takeover", post_takeover, summary="Confirm the takeover of a database restored from another instance (applies at the next start)", response=MODE_RESPONSE),
    Route("GET", "/openapi.json", openapi, summary="This document"),
]

from hausbox.system import version_routes  # noqa: E402  (versions and self-update live in their own module)

ROUTES += version_routes.ROUTES
