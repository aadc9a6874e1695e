"""Which time zone the home lives in: ``TZ`` if set, else the home location, else UTC.

The zone is decided once, at start-up, and fixed for the life of the process (the clock, calendars
and tariff hours all hang on it). Moving the home therefore asks for a restart:
``system.restart_required {reason: "home_location_changed"}``.

The location lookup uses tzfpy (time-zone polygons compiled into a 5 MB extension, no network). Its
finder holds some 35 MB of memory once built and has no way to release it, so the lookup runs in a
short-lived child process (about 0.2 s, once per start): the engine itself never keeps that memory.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Any, Callable, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hausbox.core.bus import Event, EventBus
from hausbox.core.settings import SettingsStore
from hausbox.system.location import LOCATION_KEYS, home_location, install_validators

log = logging.getLogger("hausbox.timezone")

LOOKUP_TIMEOUT_S = 30.0
_LOOKUP_SCRIPT = "import sys, tzfpy; print(tzfpy.get_tz(float(sys.argv[1]), float(sys.argv[2])))"

Lookup = Callable[[float, float], "str | None"]


@dataclass(frozen=True)
class ZoneChoice:
    tz: tzinfo
    name: str
    source: str  # "env", "location" or "default"

    def offset_hours(self, at_ms: int) -> float:
        """The zone's offset from UTC at that instant, in hours (2, -5, 5.5, 5.75)."""
        moment = datetime.fromtimestamp(at_ms / 1000, tz=timezone.utc).astimezone(self.tz)
        offset = moment.utcoffset()
        return round(offset.total_seconds() / 3600, 2) if offset is not None else 0.0

    def json(self, at_ms: int) -> dict[str, Any]:
        return {"tz": self.name, "source": self.source, "offsetHours": self.offset_hours(at_ms)}


def lookup_zone_name(latitude: float, longitude: float) -> str | None:
    """The IANA zone at those coordinates (None if the lookup fails), found in a child process."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", _LOOKUP_SCRIPT, repr(longitude), repr(latitude)],
            capture_output=True,
            text=True,
            timeout=LOOKUP_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        log.warning("time zone lookup failed: %s", error)
        return None
    if result.returncode != 0:
        log.warning("time zone lookup failed: %s", (result.stderr.strip().splitlines() or ["?"])[-1])
        return None
    return result.stdout.strip() or None


def _zone(name: str) -> tzinfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def resolve_zone(settings: Any, env: Mapping[str, str] = os.environ, lookup: Lookup = lookup_zone_name) -> ZoneChoice:
    name = (env.get("TZ") or "").strip().lstrip(":")
    if name:
        tz = _zone(name)
        if tz is not None:
            return ZoneChoice(tz, name, "env")
        log.warning("TZ=%r is not a known time zone: ignored", name)
    location = home_location(settings)
    if location is not None:
        found = lookup(*location)
        tz = _zone(found) if found else None
        if tz is not None:
            return ZoneChoice(tz, found, "location")
        log.warning("no time zone found for the home location %s, %s: using UTC", *location)
    return ZoneChoice(ZoneInfo("UTC"), "UTC", "default")


class LocationWatch:
    """The ``home.*`` settings: refused when invalid; a restart asked when the home moves."""

    def __init__(self, bus: EventBus, settings: SettingsStore):
        self._bus = bus
        install_validators(settings)
        bus.on("settings.changed", self._on_settings)

    def _on_settings(self, event: Event) -> None:
        if any(key in LOCATION_KEYS for key in event.get("keys", ())):
            log.info("home location changed: a restart applies the new time zone")
            self._bus.emit("system.restart_required", reason="home_location_changed")
