"""Routes: /plugins (admin only, but for the OAuth callback, which is public)."""

from __future__ import annotations

from typing import Any

import bottle

from hausbox.api.routing import Call, Route
from hausbox.api.schema import BOOLEAN, TEXT, obj

SHA256 = {"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}
REPO = {"type": "string"}  # checked (trimmed, owner/repo) by the service: a 400 naming it
CONFIRM = {"confirmed": BOOLEAN, "expectedSha256": SHA256}

PLUGIN = {
    "type": "object",
    "description": "An installed plugin: its manifest's fields, enabled, installedAt, source (registry, personal), trust "
    "(official, community, personal), pinnedSha256 (personal), status (connected, disconnected, error, not_configured, "
    "disabled), error (why, when not running), deviceCount, offlineDeviceCount, latestVersion",
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "version": {"type": "string"}, "type": {"enum": ["integration", "recipe"]},
        "repo": {"type": "string"}, "enabled": {"type": "boolean"}, "installedAt": {"type": "string"},
        "source": {"enum": ["registry", "personal"]}, "trust": {"enum": ["official", "community", "personal"]},
        "pinnedSha256": {"type": ["string", "null"]}, "status": {"type": "string"}, "error": {"type": "string"},
        "deviceCount": {"type": "integer"}, "offlineDeviceCount": {"type": "integer"}, "latestVersion": {"type": "string"},
    },
}  # fmt: skip
STORE_ITEM = {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "version": {"type": "string"}, "repo": {"type": "string"},
        "owner": {"type": "string"}, "type": {"enum": ["integration", "recipe"]}, "trust": {"enum": ["official", "community", "personal"]},
        "sowelVersion": {"type": ["string", "null"]}, "compatible": {"type": "boolean"}, "compatReason": {"type": "string"},
        "error": {"type": "string", "description": "a personal source whose latest release could not be read"},
    },
}  # fmt: skip
DONE = {"type": "object", "description": "{success: true, manifest (install, update), plugin (its state now)}"}
CONFIRMATIONS = (
    "409 CommunityPluginConfirmationRequired (a registry plugin of a non-official owner, without confirmed: true); "
    "409 PersonalPluginConfirmationRequired with {repo, owner, version, sha256} of the downloaded archive (a personal "
    "source: retry with confirmed: true and expectedSha256 equal to that hash; a fresh download must match, and it is pinned); "
    "400 an unsafe or invalid archive, an incompatible plugin; 404 a repo neither in the registry nor a personal source; "
    "502 the release host did not answer"
)


def list_plugins(call: Call) -> list[dict[str, Any]]:
    return call.engine.plugins.list_json()


def store(call: Call) -> list[dict[str, Any]]:
    return call.engine.plugins.store_json()


def store_refresh(call: Call) -> dict[str, Any]:
    return call.engine.plugins.refresh()


def list_sources(call: Call) -> list[dict[str, Any]]:
    return call.engine.plugins.sources_json()


def add_source(call: Call) -> dict[str, Any]:
    return call.engine.plugins.add_source(call.body["repo"], by=call.actor)


def remove_source(call: Call) -> dict[str, Any]:
    call.engine.plugins.remove_source(call.body["repo"], by=call.actor)
    return {"success": True}


def install(call: Call) -> dict[str, Any]:
    body = call.body
    return call.engine.plugins.install(body["repo"], body.get("confirmed") is True, body.get("expectedSha256"), by=call.actor)


def update(call: Call, id: str) -> dict[str, Any]:
    body = call.body
    return call.engine.plugins.update(id, body.get("confirmed") is True, body.get("expectedSha256"), by=call.actor)


def uninstall(call: Call, id: str) -> dict[str, Any]:
    return call.engine.plugins.uninstall(id, by=call.actor)


def enable(call: Call, id: str) -> dict[str, Any]:
    return call.engine.plugins.enable(id, by=call.actor)


def disable(call: Call, id: str) -> dict[str, Any]:
    return call.engine.plugins.disable(id, by=call.actor)


def oauth_callback(call: Call, id: str) -> Any:
    target = call.engine.plugins.oauth_callback(id, {key: call.query.get(key) for key in call.query.keys()})
    return bottle.HTTPResponse(status=302, headers={"Location": target})


ROUTES = [
    Route("GET", "/plugins", list_plugins, summary="Installed plugins with status and device counts (integrations, then recipes)",
          response={"type": "array", "items": PLUGIN, "description": "Installed plugins"}),
    Route("GET", "/plugins/store", store, summary="Available plugins: the registry (cached an hour) and personal sources, each with trust tier and compatibility",
          response={"type": "array", "items": STORE_ITEM, "description": "Plugins not installed"}),
    Route("POST", "/plugins/store/refresh", store_refresh, summary="Read the registry again (and forget the personal sources' releases)",
          response={"type": "object", "description": "{count, source: remote or local (the shipped copy)}"}),
    Route("GET", "/plugins/sources", list_sources, summary="Personal sources",
          response={"type": "array", "items": {"type": "object", "properties": {"repo": {"type": "string"}, "addedAt": {"type": "string"}}}, "description": "Personal sources"}),
    Route("POST", "/plugins/sources", add_source, body=obj(required={"repo": REPO}), status=201,
          summary="Add a personal source (owner/repo, trimmed; 400 otherwise, 409 when already there)"),
    Route("POST", "/plugins/sources/remove", remove_source, body=obj(required={"repo": TEXT}),
          summary="Remove a personal source (installed plugins are kept; 404 when absent)"),
    Route("POST", "/plugins/install", install, body=obj(required={"repo": REPO}, optional=CONFIRM),
          summary="Install a plugin from the registry or a personal source. " + CONFIRMATIONS, response=DONE),
    Route("POST", "/plugins/<id>/update", update, body=obj(optional=CONFIRM),
          summary="Update to the registry's version or the personal source's latest release. " + CONFIRMATIONS, response=DONE),
    Route("POST", "/plugins/<id>/uninstall", uninstall, summary="Stop, unload and remove a plugin (its devices and settings stay)"),
    Route("POST", "/plugins/<id>/enable", enable, summary="Enable, load and start a plugin", response=DONE),
    Route("POST", "/plugins/<id>/disable", disable, summary="Stop and unload a plugin", response=DONE),
    Route("GET", "/plugins/<id>/oauth/callback", oauth_callback,
          summary="OAuth provider redirect (public, no session): handed to the plugin, which checks its own state; "
          "302 to /settings/integrations?oauth_success=1 or ?oauth_error=..."),
]  # fmt: skip
