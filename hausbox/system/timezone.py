"""Which time zone the home lives in: ``TZ`` if set, else the home location, else UTC."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


@dataclass(frozen=True)
class ZoneChoice:
    tz: tzinfo
    name: str
    source: str  # "env", "location" or "default"


def resolve_zone(settings: Any, env: Mapping[str, str] = os.environ) -> ZoneChoice:
    name = (env.get("TZ") or "").strip().lstrip(":")
    if name:
        try:
            return ZoneChoice(ZoneInfo(name), name, "env")
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return ZoneChoice(ZoneInfo("UTC"), "UTC", "default")
