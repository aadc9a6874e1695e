"""The typed event names of the bus.

``PUBLIC_EVENTS`` are the spec's bus events: the WebSocket hub may deliver them to clients.
``INTERNAL_EVENTS`` stay inside the process (the hub never sends them).
"""

from __future__ import annotations

PUBLIC_EVENTS: frozenset[str] = frozenset(
    {
        # system
        "system.started",
        "system.integration.connected",
        "system.integration.disconnected",
        "system.error",
        "system.update.error",
        "system.alarm.raised",
        "system.alarm.resolved",
        "system.update.available",
        "system.update.progress",
        "system.restart_required",
        # devices
        "device.discovered",
        "device.removed",
        "device.status_changed",
        "device.data.updated",
        "device.heartbeat",
        # zones
        "zone.created",
        "zone.updated",
        "zone.removed",
        "zone.data.changed",
        # equipments
        "equipment.created",
        "equipment.updated",
        "equipment.removed",
        "equipment.data.changed",
        "equipment.order.executed",
        "equipment.order.failed",
        "equipment.order.unconfirmed",
        # recipes
        "recipe.instance.created",
        "recipe.instance.removed",
        "recipe.instance.started",
        "recipe.instance.stopped",
        "recipe.instance.state.changed",
        "recipe.instance.error",
        # modes and calendar
        "mode.created",
        "mode.updated",
        "mode.removed",
        "mode.activated",
        "mode.deactivated",
        "calendar.profile.changed",
        # other
        "sunlight.changed",
        "settings.changed",
        # outbound publishers
        "mqtt-broker.created",
        "mqtt-broker.updated",
        "mqtt-broker.removed",
        "mqtt-publisher.created",
        "mqtt-publisher.updated",
        "mqtt-publisher.removed",
        "mqtt-publisher.mapping.created",
        "mqtt-publisher.mapping.removed",
        "notification-publisher.created",
        "notification-publisher.updated",
        "notification-publisher.removed",
        "notification-publisher.mapping.created",
        "notification-publisher.mapping.removed",
        # feeds
        "activity.added",
        "log.entry",
    }
)

INTERNAL_EVENTS: frozenset[str] = frozenset(
    {
        # A user's credentials were revoked (disabled, deleted, password changed, token deleted):
        # payload userId, and sessionId / tokenId when only one credential went.
        "auth.revoked",
    }
)

ALL_EVENTS: frozenset[str] = PUBLIC_EVENTS | INTERNAL_EVENTS


