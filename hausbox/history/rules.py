"""What the history keeps: the historize rules and the write filter (digest §8), pure and in memory."""

from __future__ import annotations

import math
import re
from typing import Any

HISTORIZED_CATEGORIES = frozenset(
    {"temperature", "humidity", "pressure", "luminosity", "power", "energy", "rain", "wind", "co2", "voc", "noise", "voltage", "current", "shutter_position", "battery"}
)
_NEVER_ALIAS = re.compile(r"^j\d+_")
DEADBANDS = {
    "temperature": 0.2, "humidity": 1.0, "power": 5.0, "energy": 0.01, "shutter_position": 2.0,
    "pressure": 0.5, "voltage": 0.1, "current": 0.05, "battery": 1.0,
}  # fmt: skip
MIN_WRITE_INTERVAL_MS = 30_000
MAX_WRITE_INTERVAL_MS = 300_000
_EPSILON = 1e-9  # 20.0 -> 20.2 is a move of 0.2, whatever binary floating point makes of it


def is_historized(override: int | None, alias: str, category: str | None) -> bool:
    """The binding's override, then the alias, then the category."""
    if override in (0, 1):
        return override == 1
    if alias == "demand_30min" or _NEVER_ALIAS.match(alias):
        return False
    if alias in ("setpoint", "power"):
        return True
    return category in HISTORIZED_CATEGORIES


def is_meter(alias: str, category: str | None) -> bool:
    """Whether a binding's readings feed the energy sums: energy data (and a production meter's
    ``autoconso`` and ``injection``), except what the alias rule never keeps (``j1_`` counters)."""
    if alias == "demand_30min" or _NEVER_ALIAS.match(alias):
        return False
    return category == "energy" or alias in ("autoconso", "injection")


def numeric_value(value: Any) -> float | None:
    """The value as the store keeps it: numbers as they are, booleans (and "ON"/"true") as 1/0; else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None  # NaN and infinities make no point
    if isinstance(value, str) and value in ("ON", "OFF", "true", "false"):
        return 1.0 if value in ("ON", "true") else 0.0
    return None


def deadband(category: str | None, last: float) -> float | None:
    """How far a value of ``category`` must move from the last one written; None: any change counts."""
    if category == "luminosity":
        return max(abs(last) * 0.05, 1.0)
    return DEADBANDS.get(category or "")


class WriteFilter:
    """Which values are worth a point: the last written value and time of every series, in memory."""

    def __init__(self, min_interval_ms: int = MIN_WRITE_INTERVAL_MS, max_interval_ms: int = MAX_WRITE_INTERVAL_MS):
        self.min_interval_ms = min_interval_ms
        self.max_interval_ms = max_interval_ms
        self._last: dict[tuple[str, str], tuple[Any, int]] = {}

    def accept(self, key: tuple[str, str], value: Any, category: str | None, now_ms: int, discrete: bool) -> bool:
        """Whether to write ``value`` now; when so, it becomes the series' last written value."""
        if self._passes(key, value, category, now_ms, discrete):
            self._last[key] = (value, now_ms)
            return True
        return False

    def forget(self, equipment_id: str) -> None:
        for key in [k for k in self._last if k[0] == equipment_id]:
            del self._last[key]

    def _passes(self, key: tuple[str, str], value: Any, category: str | None, now_ms: int, discrete: bool) -> bool:
        last = self._last.get(key)
        if last is None:
            return True
        last_value, last_ms = last
        if discrete:
            return value != last_value
        elapsed = now_ms - last_ms
        if elapsed < self.min_interval_ms:
            return False
        if elapsed >= self.max_interval_ms:
            return True
        band = deadband(category, float(last_value))
        if band is None:
            return value != last_value
        return abs(float(value) - float(last_value)) >= band - _EPSILON
