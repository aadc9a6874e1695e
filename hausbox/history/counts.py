"""Counts over the last 24 hours, per hour (the status routes' statistics)."""

from __future__ import annotations


class Last24h:
    """Counts per hour, summed over the last 24 hours."""

    def __init__(self) -> None:
        self._hours: dict[int, int] = {}

    def add(self, now_ms: int, count: int = 1) -> None:
        hour = now_ms // 3_600_000
        self._hours[hour] = self._hours.get(hour, 0) + count
        for old in [h for h in self._hours if h <= hour - 24]:
            del self._hours[old]

    def total(self, now_ms: int) -> int:
        hour = now_ms // 3_600_000
        return sum(count for h, count in self._hours.items() if h > hour - 24)

