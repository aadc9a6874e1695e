"""Reading the history back: series at a resolution, sparklines, historized aliases.

A series query picks its tier from the span (``auto``) or as asked. The hourly and daily tiers are
made behind a watermark, so the part of a span the jobs have not reached yet is computed from the
tier below at request time: a chart is never missing its last hours. An energy meter's aggregated
series is the Wh it consumed per bucket (from the energy sums), not a sum of counter readings.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any, Iterable

from hausbox.core.clock import iso_utc, parse_iso
from hausbox.core.errors import BadRequest
from hausbox.history import buckets, rules
from hausbox.history.jobs import DAILY, HOURLY
from hausbox.history.batch import Aggregate, Key
from hausbox.history.store import HistoryStore

AGGREGATIONS = ("raw", "1h", "1d", "auto")
RAW_LIMIT, RAW_DISCRETE_LIMIT, AGGREGATED_LIMIT = 2500, 2000, 500
SPARKLINE_WINDOW_MS = 1_800_000
SPARKLINE_SPAN_MS = 24 * buckets.HOUR_MS
ALIASES_SPAN_MS = 30 * buckets.DAY_MS
SUMMED_CATEGORIES = ("rain",)
_RELATIVE = re.compile(r"^-(\d{1,6})([mhd])$")
_UNIT_MS = {"m": 60_000, "h": buckets.HOUR_MS, "d": buckets.DAY_MS}


def parse_time(text: str | None, now_ms: int, name: str, default: int) -> int:
    """``-N(m|h|d)`` before now, or an ISO instant; empty or absent: ``default``."""
    if not text:
        return default
    match = _RELATIVE.match(text.strip())
    if match:
        return now_ms - int(match.group(1)) * _UNIT_MS[match.group(2)]
    try:
        return parse_iso(text.strip())
    except ValueError:
        raise BadRequest(f"{name} must be -N followed by m, h or d, or an ISO date and time") from None


def resolution_for(aggregation: str, span_ms: int, category: str | None, alias: str, discrete: bool) -> str:
    if aggregation not in AGGREGATIONS:
        raise BadRequest(f"aggregation must be one of {', '.join(AGGREGATIONS)}")
    if discrete:
        return "raw"  # booleans and enums have no mean
    if aggregation != "auto":
        return aggregation
    if category == "power" or alias == "power":
        return "raw" if span_ms <= 24 * buckets.HOUR_MS else "1h"
    if span_ms <= 6 * buckets.HOUR_MS:
        return "raw"
    return "1h" if span_ms <= 7 * buckets.DAY_MS else "1d"


def series(store: HistoryStore, tz: tzinfo, key: Key, from_ms: int, to_ms: int, resolution: str, data_type: str, category: str | None) -> list[dict[str, Any]]:
    """The points of one series in ``[from_ms, to_ms)`` at ``resolution``, oldest first."""
    discrete = data_type in ("boolean", "enum", "text")
    if resolution == "raw":
        if data_type in ("enum", "text"):
            rows = store.raw_text(*key, from_ms, to_ms, RAW_DISCRETE_LIMIT)
        else:
            rows = store.raw(*key, from_ms, to_ms, RAW_DISCRETE_LIMIT if discrete else RAW_LIMIT)
        return [{"time": iso_utc(ts), "value": value} for ts, value in rows]
    if rules.is_meter(key[1], category):
        tier = "energy_hourly" if resolution == "1h" else "energy_daily"
        rows = store.energy(tier, *key, from_ms, to_ms)[-AGGREGATED_LIMIT:]
        return [{"time": iso_utc(ts), "value": round(hp + hc, 4)} for ts, hp, hc in rows]
    aggregates = hourly(store, tz, key, from_ms, to_ms) if resolution == "1h" else daily(store, tz, key, from_ms, to_ms)
    summed = category in SUMMED_CATEGORIES
    return [
        {"time": iso_utc(ts), "value": total if summed else mean, "min": low, "max": high}
        for ts, low, high, mean, total, _count in aggregates[-AGGREGATED_LIMIT:]
    ]


def hourly(store: HistoryStore, tz: tzinfo, key: Key, from_ms: int, to_ms: int) -> list[Aggregate]:
    """The hourly tier, and past its watermark the same aggregates made from raw points now."""
    done = min(store.watermark(HOURLY) or from_ms, to_ms)
    made = store.aggregates("hourly", *key, from_ms, done) if done > from_ms else []
    return made + aggregate(store.raw(*key, max(from_ms, done), to_ms), lambda ts: buckets.hour_start(ts, tz))


def daily(store: HistoryStore, tz: tzinfo, key: Key, from_ms: int, to_ms: int) -> list[Aggregate]:
    """The daily tier, and past its watermark days made from the hourly rows (and raw points)."""
    done = min(store.watermark(DAILY) or from_ms, to_ms)
    made = store.aggregates("daily", *key, from_ms, done) if done > from_ms else []
    rest = hourly(store, tz, key, max(from_ms, done), to_ms)
    return made + merge(rest, lambda ts: buckets.day_start(ts, tz))


def aggregate(rows: Iterable[tuple[int, float]], bucket_of: Any) -> list[Aggregate]:
    """Raw ``(ts, value)`` rows, oldest first, as ``(bucket, min, max, mean, sum, count)``."""
    out: list[Aggregate] = []
    current, values = None, []
    for ts, value in rows:
        bucket = bucket_of(ts)
        if bucket != current and values:
            out.append((current, min(values), max(values), sum(values) / len(values), sum(values), len(values)))
            values = []
        current = bucket
        values.append(value)
    if values:
        out.append((current, min(values), max(values), sum(values) / len(values), sum(values), len(values)))
    return out


def merge(rows: Iterable[Aggregate], bucket_of: Any) -> list[Aggregate]:
    """Aggregates merged into coarser buckets (the mean weighted by counts)."""
    out: dict[int, list[float]] = {}
    for ts, low, high, mean, total, count in rows:
        into = out.setdefault(bucket_of(ts), [low, high, 0.0, 0.0, 0])
        into[0], into[1] = min(into[0], low), max(into[1], high)
        into[2] += mean * count
        into[3] += total
        into[4] += count
    return [(ts, low, high, weighted / count, total, count) for ts, (low, high, weighted, total, count) in sorted(out.items())]


def sparkline(store: HistoryStore, keys: list[Key], now_ms: int) -> list[float]:
    """Up to 48 values: means over the last 48 half-hours (on the clock, the current one included),
    averaged across ``keys``; a half-hour with no point has no value."""
    start = now_ms - now_ms % SPARKLINE_WINDOW_MS - SPARKLINE_SPAN_MS + SPARKLINE_WINDOW_MS
    per_window = store.window_means(keys, start, now_ms, SPARKLINE_WINDOW_MS)
    return [round(sum(means) / len(means), 4) for _window, means in sorted(per_window.items())]
