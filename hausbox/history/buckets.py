"""Calendar buckets in the home's local time, as UTC milliseconds: pure functions.

An hour bucket starts on a local hour (so a +05:30 home gets buckets at :30 UTC); a day bucket
runs from one local midnight to the next, so it lasts 23 or 25 hours on the DST days.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo

HOUR_MS = 3_600_000
DAY_MS = 86_400_000


def local(ms: int, tz: tzinfo) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=tz)


def hour_start(ms: int, tz: tzinfo) -> int:
    """The start of the local hour holding ``ms``."""
    offset = local(ms, tz).utcoffset()
    sub_hour = int(offset.total_seconds() * 1000) % HOUR_MS if offset else 0
    return ms - (ms + sub_hour) % HOUR_MS


def sub_hour_offset(ms: int, tz: tzinfo) -> int:
    """The part of the UTC offset at ``ms`` that is not whole hours (0 in most homes), in ms."""
    offset = local(ms, tz).utcoffset()
    return int(offset.total_seconds() * 1000) % HOUR_MS if offset else 0


def midnight(day: date, tz: tzinfo) -> int:
    """Local midnight starting ``day``, in UTC ms."""
    return int(datetime.combine(day, time(0), tzinfo=tz).timestamp() * 1000)


def day_start(ms: int, tz: tzinfo) -> int:
    return midnight(local(ms, tz).date(), tz)


def next_day(ms: int, tz: tzinfo) -> int:
    """The local midnight after the day holding ``ms``."""
    return midnight(local(ms, tz).date() + timedelta(days=1), tz)


def hours_between(start_ms: int, end_ms: int, tz: tzinfo) -> list[int]:
    """The local hour starts in ``[start_ms, end_ms)`` (23, 24 or 25 in a local day)."""
    hours, at = [], hour_start(start_ms, tz)
    while at < end_ms:
        hours.append(at)
        at = hour_start(at + HOUR_MS + 60_000, tz)  # +1 min: a half-hour offset change cannot stall it
    return hours


def days_between(first: date, last: date, tz: tzinfo) -> list[int]:
    """Local midnights of the days ``first`` .. ``last`` (exclusive), in UTC ms."""
    return [midnight(first + timedelta(days=n), tz) for n in range((last - first).days)]
