"""Peak (``hp``) / off-peak (``hc``) classification of energy readings: pure functions.

The rule (the older engine's, kept as it is): a reading stands for the 30-minute window that
starts at its timestamp. That start is read in the home's local time (so a slot boundary follows
daylight saving time: 06:00 is 04:00 UTC in summer and 05:00 UTC in winter). The first schedule
whose days hold the window's local weekday (0 is Sunday) applies; none, or one without slots,
makes the whole window ``hp``. Each slot adds the minutes it shares with
``[start, start + 30)``, counted in wall-clock minutes of that local day, to its tariff; an end of
``00:00`` is midnight at the end of the day, and a slot whose end is not after its start wraps
into ``[start, 24:00)`` plus ``[00:00, end)`` of the same day: a 22:00-06:00 slot in Friday's
schedule makes Friday 00:00-06:00 and 22:00-24:00 off-peak, and Saturday's early morning is what
Saturday's schedule says. Minutes of the window past midnight count in no slot. No shared minute: ``hp``. Otherwise
the reading is split in proportion to the minutes.

Local time of an instant is always well defined: the hour skipped in spring has no instant, and
both passes of the hour repeated in autumn read the same wall clock, so they classify alike.

The schedule is compiled once per tariff (``compile_tariff``): per weekday, running counts of
``hp`` and ``hc`` slot-minutes, so classifying a reading is one local-time conversion and four
list lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any, Literal, Sequence

from hausbox.core.clock import parse_hhmm, weekday

Tariff = Literal["hp", "hc"]
WINDOW_MIN = 30
DAY_MIN = 1440


@dataclass(frozen=True)
class DayCounts:
    """Running slot-minute counts of one weekday: ``hp[m]`` counts the ``hp`` minutes before m."""

    hp: tuple[int, ...]
    hc: tuple[int, ...]


@dataclass(frozen=True)
class CompiledTariff:
    """Per weekday (0 is Sunday) its counts, or None where the whole day is ``hp``."""

    days: tuple[DayCounts | None, ...]


def minute_of(hhmm: str) -> int:
    hours, minutes = parse_hhmm(hhmm)
    return hours * 60 + minutes


def slot_ranges(start: str, end: str) -> list[tuple[int, int]]:
    """The minute ranges ``[a, b)`` of a slot within one day (two when it crosses midnight)."""
    first, last = minute_of(start), minute_of(end) or DAY_MIN
    if last > first:
        return [(first, last)]
    return [(first, DAY_MIN), (0, last)]


def running_counts(ranges: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """``counts[m]`` = how many slot-minutes the ranges hold before minute m (0..1440)."""
    per_minute = [0] * DAY_MIN
    for first, last in ranges:
        for minute in range(first, last):
            per_minute[minute] += 1
    counts = [0]
    for covered in per_minute:
        counts.append(counts[-1] + covered)
    return tuple(counts)


def compile_day(slots: Sequence[dict[str, Any]]) -> DayCounts | None:
    if not slots:
        return None
    ranges: dict[str, list[tuple[int, int]]] = {"hp": [], "hc": []}
    for slot in slots:
        ranges[slot["tariff"]].extend(slot_ranges(slot["start"], slot["end"]))
    return DayCounts(hp=running_counts(ranges["hp"]), hc=running_counts(ranges["hc"]))


def compile_tariff(tariff: dict[str, Any] | None) -> CompiledTariff:
    """The classifier of a (validated) tariff; None or no schedules: everything ``hp``."""
    schedules = (tariff or {}).get("schedules", [])
    days: list[DayCounts | None] = []
    for day in range(7):
        schedule = next((s for s in schedules if day in s["days"]), None)
        days.append(compile_day(schedule["slots"]) if schedule else None)
    return CompiledTariff(days=tuple(days))


def window_minutes(compiled: CompiledTariff, instant_ms: int, tz: tzinfo) -> tuple[int, int]:
    """``(hp, hc)`` slot-minutes of the 30-minute window starting at ``instant_ms``."""
    local = datetime.fromtimestamp(instant_ms / 1000, tz=tz)
    counts = compiled.days[weekday(local)]
    if counts is None:
        return 0, 0
    first = local.hour * 60 + local.minute
    last = min(first + WINDOW_MIN, DAY_MIN)
    return counts.hp[last] - counts.hp[first], counts.hc[last] - counts.hc[first]


def split(compiled: CompiledTariff, total_wh: float, instant_ms: int, tz: tzinfo) -> tuple[float, float]:
    """``(hp_wh, hc_wh)`` of a reading of ``total_wh`` taken at ``instant_ms``; they add up to it."""
    hp_min, hc_min = window_minutes(compiled, instant_ms, tz)
    if hp_min + hc_min == 0:
        return total_wh, 0
    hc_wh = total_wh * hc_min / (hp_min + hc_min)
    return total_wh - hc_wh, hc_wh


def classify(compiled: CompiledTariff, instant_ms: int, tz: tzinfo) -> Tariff:
    """The tariff of the window starting at ``instant_ms``: ``hc`` when most of it is ``hc``."""
    hp_min, hc_min = window_minutes(compiled, instant_ms, tz)
    return "hc" if hc_min > hp_min else "hp"
