"""The calendar periods of the energy routes (``?period=day|week|month|year&date=YYYY-MM-DD``), in
the home's local time, and the energy sums of the history store put into their buckets: pure
functions but for the store read.

A day is one bucket per local hour: 24 on a normal day, 23 on the spring-forward day and 25 on the
fall-back day (the spec's "24 hourly" is the normal day; an hour is never invented or merged). A
week is 7 local days from Monday, a month its 28 to 31 days, a year its 12 months. Week, month and
year read the daily sums (``energy_daily``), never the hourly ones: a year is ~365 rows per series.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, timedelta, tzinfo
from typing import Any, Iterable

from hausbox.core.clock import iso_utc
from hausbox.core.errors import BadRequest
from hausbox.history import buckets

PERIODS = ("day", "week", "month", "year")
RESOLUTIONS = {"day": "1h", "week": "1d", "month": "1d", "year": "1mo"}
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")  # ASCII digits: \d would take any script's
# Far enough either way for any meter; keeps date arithmetic (the next January, a local midnight) in range.
FIRST_YEAR, LAST_YEAR = 1970, 9998

Sums = tuple[float, float]  # hp Wh, hc Wh


@dataclass(frozen=True)
class Period:
    name: str
    starts: tuple[int, ...]  # bucket starts, UTC ms, oldest first
    end: int  # the end of the last bucket (exclusive)
    tier: str  # the energy table the buckets are made from

    @property
    def start(self) -> int:
        return self.starts[0]

    @property
    def resolution(self) -> str:
        return RESOLUTIONS[self.name]

    def head(self) -> dict[str, Any]:
        """The fields every energy response starts with."""
        return {"period": self.name, "from": iso_utc(self.start), "to": iso_utc(self.end), "resolution": self.resolution}

    def times(self) -> list[str]:
        return [iso_utc(start) for start in self.starts]


def parse_query(query: Any, today: date) -> tuple[str, date]:
    """``(period, date)`` of the query string: period defaults to day, date to ``today``; else 400."""
    period = query.get("period") or "day"
    if period not in PERIODS:
        raise BadRequest("Invalid period. Use: day, week, month, year")
    raw = query.get("date") or ""
    if not raw:
        return period, today
    if not _DATE.match(raw):
        raise BadRequest("date must be a calendar date YYYY-MM-DD")
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        raise BadRequest("date must be a calendar date YYYY-MM-DD") from None
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise BadRequest(f"date must be between {FIRST_YEAR} and {LAST_YEAR}")
    return period, day


def period_of(name: str, day: date, tz: tzinfo) -> Period:
    """The calendar period ``name`` holding ``day``, in ``tz``."""
    if name == "day":
        start, end = buckets.midnight(day, tz), buckets.midnight(day + timedelta(days=1), tz)
        return Period(name, tuple(buckets.hours_between(start, end, tz)), end, "energy_hourly")
    if name == "week":
        monday = day - timedelta(days=day.weekday())
        return _days(name, monday, monday + timedelta(days=7), tz)
    if name == "month":
        first = day.replace(day=1)
        return _days(name, first, _next_month(first), tz)
    months = [date(day.year, month, 1) for month in range(1, 13)]
    return Period(name, tuple(buckets.midnight(m, tz) for m in months), buckets.midnight(date(day.year + 1, 1, 1), tz), "energy_daily")


def _days(name: str, first: date, last: date, tz: tzinfo) -> Period:
    return Period(name, tuple(buckets.days_between(first, last, tz)), buckets.midnight(last, tz), "energy_daily")


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def bucketed(period: Period, rows: Iterable[tuple[int, float, float]]) -> list[list[float]]:
    """``[hp, hc]`` per bucket of ``period`` (zero where no row falls), from ``(ts, hp, hc)`` rows.

    A row goes to the last bucket starting at or before it, so a daily row lands in its month, and a
    row written under another time zone (the home moved) still lands in the bucket holding it."""
    sums = [[0.0, 0.0] for _ in period.starts]
    for ts, hp, hc in rows:
        index = bisect_right(period.starts, ts) - 1
        if 0 <= index and ts < period.end:
            sums[index][0] += hp
            sums[index][1] += hc
    return sums


def read_sums(store: Any, period: Period, keys: Iterable[tuple[str, str]]) -> list[list[float]]:
    """The energy sums of ``keys`` (equipment id, alias) added together, per bucket of ``period``."""
    rows: list[tuple[int, float, float]] = []
    for equipment_id, alias in keys:
        rows.extend(store.energy(period.tier, equipment_id, alias, period.start, period.end))
    return bucketed(period, rows)
