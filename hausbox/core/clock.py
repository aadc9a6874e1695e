"""Time for the whole engine. Everything reads the time through here, so tests can drive it."""

from __future__ import annotations

import time
from datetime import datetime, timezone


def now_ms() -> int:
    """Wall-clock time in milliseconds since the epoch."""
    return int(time.time() * 1000)


def iso_utc(ms: int | None) -> str | None:
    """``2026-02-20T14:30:00.123Z`` for a millisecond timestamp (None stays None)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> int:
    """Milliseconds since the epoch for an ISO 8601 timestamp; naive times are taken as UTC."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp() * 1000)
