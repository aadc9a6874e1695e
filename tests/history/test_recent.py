"""Sparkline half-hours from memory (hausbox.history.recent) give what a scan of the store gives:
points flushed or pending, written before and after the first sparkline, across a restart, and
the ranges memory cannot answer (older than it covers, points a day ahead) answered by the scan."""

from __future__ import annotations

import random

import pytest

from hausbox.history.batch import Batch
from hausbox.history.query import sparkline
from hausbox.history.recent import SLOTS, WINDOW_MS
from hausbox.history.store import HistoryStore

HOUR = 3_600_000
KEYS = [("salon", "temperature"), ("chambre", "temperature"), ("cuisine", "humidity")]
T0 = 1_781_424_000_000  # a half-hour start


def expected(points: list[tuple[str, str, int, float]], keys: list, from_ms: int, to_ms: int) -> dict[int, list[float]]:
    """The per-half-hour means a scan gives, computed from the points themselves."""
    sums: dict[tuple, list[float]] = {}
    for e, a, ts, value in points:
        if (e, a) in keys and from_ms <= ts < to_ms:
            into = sums.setdefault(((e, a), ts - (ts - from_ms) % WINDOW_MS), [0.0, 0])
            into[0] += value
            into[1] += 1
    out: dict[int, list[float]] = {}
    for (key, window), (total, count) in sorted(sums.items(), key=lambda item: (item[0][1], keys.index(item[0][0]))):
        out.setdefault(window, []).append(total / count)
    return out


def same(store: HistoryStore, points: list, keys: list, from_ms: int, to_ms: int) -> None:
    got = store.window_means(keys, from_ms, to_ms, WINDOW_MS)
    want = expected(points, keys, from_ms, to_ms)
    assert sorted(got) == sorted(want)
    for window, means in want.items():
        assert sorted(got[window]) == pytest.approx(sorted(means)), window


def stream(start: int, end: int, rng: random.Random) -> list[tuple[str, str, int, float]]:
    """Each series reporting at irregular times, some on a half-hour's first or last millisecond."""
    points = []
    for e, a in KEYS:
        ts = start + rng.randrange(0, 90_000)
        while ts < end:
            points.append((e, a, ts, round(rng.uniform(-5, 30), 2)))
            ts += max(1, rng.choice((1, 29_999, 60_000, 61_000, 173_000, WINDOW_MS - ts % WINDOW_MS - 1, WINDOW_MS - ts % WINDOW_MS)))
    return sorted(points, key=lambda p: p[2])


def write(store: HistoryStore, points: list, per_batch: int = 97) -> None:
    for i in range(0, len(points), per_batch):
        store.write(Batch(points=points[i : i + per_batch]))


def test_memory_answers_as_the_scan_does_before_and_after_the_first_sparkline_and_a_restart(tmp_path):
    rng = random.Random(7)
    store = HistoryStore(tmp_path / "history.db")
    older = stream(T0 - 30 * HOUR, T0, rng)  # more than a day: some fall before what memory covers
    write(store, older)
    store.flush()
    pending = stream(T0, T0 + 2 * HOUR, rng)
    write(store, pending)  # journaled, not flushed
    everything = older + pending
    now = T0 + 2 * HOUR
    start = now - now % WINDOW_MS - (SLOTS - 2) * WINDOW_MS  # the sparkline's first half-hour
    assert len(sparkline(store, KEYS[:1], now)) == 47  # the half-hour starting now has no point yet
    assert store._recent.covered_from is not None  # built by that first sparkline
    same(store, everything, KEYS, start, now)
    same(store, everything, KEYS[1:], start, now)  # a subset of the series

    later = stream(now, now + 5 * HOUR, rng)
    write(store, later[: len(later) // 2])
    store.flush()
    write(store, later[len(later) // 2 :])
    everything += later
    for now in (T0 + 3 * HOUR + 1, T0 + 7 * HOUR - 1, T0 + 7 * HOUR):
        start = now - now % WINDOW_MS - (SLOTS - 2) * WINDOW_MS
        same(store, everything, KEYS, start, now)
    # Memory answered where every point is before now; where some are after, the scan did.
    assert store._recent.means(KEYS, start, T0 + 7 * HOUR) is not None
    assert store._recent.means(KEYS, start, T0 + 3 * HOUR + 1) is None

    again = HistoryStore(tmp_path / "history.db")  # a restart: the table and the journal again
    same(again, everything, KEYS, start, now)
    assert again._recent.means(KEYS, start, now) is not None


def test_what_memory_does_not_cover_is_scanned(tmp_path):
    rng = random.Random(11)
    store = HistoryStore(tmp_path / "history.db")
    points = stream(T0 - 30 * HOUR, T0, rng)
    write(store, points)
    now = T0
    store.window_means(KEYS, now - 24 * HOUR, now, WINDOW_MS)  # builds memory for the last day
    covered_from = store._recent.covered_from
    assert store._recent.means(KEYS, covered_from - WINDOW_MS, now) is None
    same(store, points, KEYS, covered_from - 6 * WINDOW_MS, now)  # older than memory holds: the scan
    same(store, points, KEYS, T0 - 30 * HOUR, T0 - 20 * HOUR)

    ahead = [(*KEYS[0], now + 25 * HOUR + 5, 99.0)]  # a device stamping a day ahead takes a slot of the range
    write(store, ahead)
    assert store._recent.means(KEYS, covered_from, now) is None
    same(store, points + ahead, KEYS, covered_from, now)

    late = [(*KEYS[1], covered_from - 1, 1.0), (*KEYS[1], covered_from + 1, 2.0)]  # one point before memory's range
    write(store, late)
    same(store, points + ahead + late, KEYS[1:], covered_from, now)
