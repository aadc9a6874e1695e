"""The clock: local-time occurrences across daylight-saving changes, timers, manual time."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from hausbox.core.clock import (
    ManualClock,
    local_instant,
    next_local_time,
    parse_hhmm,
    weekday,
)

PARIS = ZoneInfo("Europe/Paris")
EVERY_DAY = range(7)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def test_a_time_in_the_skipped_hour_happens_once_just_after_the_gap():
    # 2026-03-29: Paris jumps from 02:00 CET to 03:00 CEST.
    first = next_local_time(utc("2026-03-28T12:00:00"), EVERY_DAY, "02:30", PARIS)
    assert first.astimezone(timezone.utc) == utc("2026-03-29T01:00:00")  # 03:00 CEST
    second = next_local_time(first, EVERY_DAY, "02:30", PARIS)
    assert second.astimezone(timezone.utc) == utc("2026-03-30T00:30:00")  # next day, 02:30 CEST


def test_a_time_in_the_repeated_hour_happens_once():
    # 2026-10-25: Paris goes back from 03:00 CEST to 02:00 CET; 02:30 happens twice.
    first = next_local_time(utc("2026-10-24T12:00:00"), EVERY_DAY, "02:30", PARIS)
    assert first.astimezone(timezone.utc) == utc("2026-10-25T00:30:00")  # the CEST one
    second = next_local_time(first, EVERY_DAY, "02:30", PARIS)
    assert second.astimezone(timezone.utc) == utc("2026-10-26T01:30:00")  # not 01:30Z the same day


def test_ordinary_times_keep_their_wall_clock_across_the_change():
    before = next_local_time(utc("2026-03-28T00:00:00"), EVERY_DAY, "07:00", PARIS)
    after = next_local_time(before, EVERY_DAY, "07:00", PARIS)
    assert (before.hour, after.hour) == (7, 7)
    assert (after.astimezone(timezone.utc) - before.astimezone(timezone.utc)).total_seconds() == 23 * 3600


def test_days_are_sunday_first():
    sunday = next_local_time(utc("2026-11-18T12:00:00"), [0], "09:00", PARIS)  # a Wednesday
    assert sunday.date().isoformat() == "2026-11-22" and weekday(sunday) == 0
    assert weekday(datetime(2026, 11, 21, tzinfo=PARIS)) == 6


def test_hhmm_is_strict():
    assert parse_hhmm("07:05") == (7, 5)
    for bad in ("7:05", "24:00", "12:60", "ab:cd", "1200", ""):
        with pytest.raises(ValueError):
            parse_hhmm(bad)


def test_local_instant_of_an_ordinary_time():
    assert local_instant(datetime(2026, 6, 1).date(), 8, 15, PARIS).isoformat() == "2026-06-01T08:15:00+02:00"


def test_manual_clock_fires_due_timers_in_order_and_honours_cancel():
    clock = ManualClock(PARIS, 1_000_000)
    fired = []
    clock.call_later(10, lambda: fired.append(("b", clock.now_ms())))
    clock.call_later(5, lambda: fired.append(("a", clock.now_ms())))
    cancelled = clock.call_later(7, lambda: fired.append("never"))
    cancelled.cancel()
    clock.advance(6)
    assert fired == [("a", 1_005_000)]
    clock.advance(60)
    assert fired == [("a", 1_005_000), ("b", 1_010_000)] and clock.now_ms() == 1_066_000


def test_iso_utc_matches_the_standard_format():
    from hausbox.core.clock import iso_utc

    for ms in (0, 1_795_280_448_123, 1_795_280_448_999, 1_795_280_449_000, 951_782_400_007, 1_795_280_448_123):
        expected = datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        assert iso_utc(ms) == expected
    assert iso_utc(None) is None
