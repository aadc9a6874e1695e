"""The last day of raw numbers as half-hour sums per series, in memory: sparklines without a scan.

The points table is ordered by time (new rows are appended, for the SD card's sake), so one
series' last 24 h is a scan of every series' points of that day: a sparkline cost the whole
house's day of points, on the core every request shares. Here each series keeps a ring of its
last ``SLOTS`` half-hours (sum and count), filled once from one scan of the table and then by
every point the store takes, so a sparkline reads at most ``SLOTS`` slots per series.

A point written twice at the same millisecond counts twice here (the table keeps the last): a
sparkline's half-hour mean, not a record.
"""

from __future__ import annotations

from array import array
from typing import Iterable

from hausbox.history.batch import Key, Point

WINDOW_MS = 1_800_000
SLOTS = 49  # a sparkline's 48 half-hours and the one before the first, for a query that starts mid-slot


class _Ring:
    __slots__ = ("starts", "sums", "counts", "latest")

    def __init__(self) -> None:
        self.starts = array("q", [-1]) * SLOTS  # the half-hour each slot holds (its start, ms)
        self.sums = array("d", [0.0]) * SLOTS
        self.counts = array("q", [0]) * SLOTS
        self.latest = array("q", [-1]) * SLOTS  # the newest point's time in each slot

class RecentWindows:
    """Half-hour sums of each series' recent points, from ``covered_from`` on once built."""

    def __init__(self) -> None:
        self._rings: dict[Key, _Ring] = {}
        self.covered_from: int | None = None  # None until built: nothing is kept before that

    def build(self, covered_from: int, sums: Iterable[tuple[Key, int, float, int, int]], pending: Iterable[Point]) -> None:
        """Start from ``(key, half-hour start, sum, count, newest time)`` rows of the table since
        ``covered_from`` (a half-hour start) and the points not yet in it."""
        self._rings = {}
        self.covered_from = covered_from
        rings = self._rings
        for key, start, total, count, latest in sums:
            ring = rings.get(key) or self._ring(key)
            slot = start // WINDOW_MS % SLOTS
            ring.starts[slot], ring.sums[slot], ring.counts[slot], ring.latest[slot] = start, total, count, latest
        self.add(pending)

    def add(self, points: Iterable[Point]) -> None:
        covered_from = self.covered_from
        if covered_from is None:
            return
        rings = self._rings
        for equipment_id, alias, ts, value in points:
            start = ts - ts % WINDOW_MS
            if start < covered_from:
                continue
            ring = rings.get((equipment_id, alias)) or self._ring((equipment_id, alias))
            slot = start // WINDOW_MS % SLOTS
            held = ring.starts[slot]
            if held != start:
                if held > start:
                    continue  # a day older than the series' newest half-hour: out of every sparkline
                ring.starts[slot], ring.sums[slot], ring.counts[slot], ring.latest[slot] = start, 0.0, 0, ts
            ring.sums[slot] += value
            ring.counts[slot] += 1
            if ts > ring.latest[slot]:
                ring.latest[slot] = ts

    def means(self, keys: list[Key], from_ms: int, to_ms: int) -> dict[int, list[float]] | None:
        """Per half-hour from ``from_ms`` (a half-hour start) to ``to_ms``: the mean of each of
        ``keys`` with points in it; None when memory cannot tell (not built, a range it does not
        cover, a series whose newer points took the slot of a half-hour in the range, or points
        stamped after ``to_ms`` in its last half-hour)."""
        if self.covered_from is None or from_ms < self.covered_from or from_ms % WINDOW_MS or to_ms - from_ms > SLOTS * WINDOW_MS:
            return None
        means: dict[int, list[float]] = {}
        for key in keys:
            ring = self._rings.get(key)
            if ring is None:
                continue
            for start, total, count, latest in zip(ring.starts, ring.sums, ring.counts, ring.latest):
                if start >= from_ms + SLOTS * WINDOW_MS:
                    return None  # points stamped a day ahead of the range pushed one of its half-hours out
                if from_ms <= start < to_ms and count:
                    if latest >= to_ms:
                        return None
                    means.setdefault(start, []).append(total / count)
        return means

    def _ring(self, key: Key) -> _Ring:
        """A new, empty ring for ``key``."""
        ring = self._rings[key] = _Ring()
        return ring
