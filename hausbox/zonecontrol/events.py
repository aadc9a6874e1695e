"""The event of zone aggregation, with its payload."""

from typing import Any, TypedDict

ZONE_DATA_CHANGED = "zone.data.changed"


class ZoneDataChanged(TypedDict):
    zoneId: str
    aggregatedData: dict[str, Any]


EVENTS = {ZONE_DATA_CHANGED: ZoneDataChanged}
