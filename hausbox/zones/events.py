"""The events of the zone tree, with their payloads."""

from typing import Any, TypedDict

ZONE_CREATED = "zone.created"
ZONE_UPDATED = "zone.updated"
ZONE_REMOVED = "zone.removed"


class ZoneCreated(TypedDict):
    zone: dict[str, Any]


class ZoneUpdated(TypedDict):
    zone: dict[str, Any]


class ZoneRemoved(TypedDict):
    zoneId: str
    zoneName: str


EVENTS = {ZONE_CREATED: ZoneCreated, ZONE_UPDATED: ZoneUpdated, ZONE_REMOVED: ZoneRemoved}
