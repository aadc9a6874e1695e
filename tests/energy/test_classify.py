"""The peak/off-peak classifier over a known week and the days of both DST changes in Paris.

Expected values are worked out by hand in each test: Paris is UTC+1 in winter, UTC+2 in summer;
on 2026-03-29 local 02:00 jumps to 03:00 (01:00 UTC), on 2026-10-25 local 03:00 falls back to
02:00 (01:00 UTC). Day 0 is Sunday.
"""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from hausbox.energy.classify import classify, compile_tariff, split, window_minutes

PARIS = ZoneInfo("Europe/Paris")
WEEKDAYS = [1, 2, 3, 4, 5]
# Weekdays: off-peak 22:00-06:00 (crossing midnight); Saturday and Sunday off-peak all day.
WEEK = {
    "schedules": [
        {"days": WEEKDAYS, "slots": [{"start": "06:00", "end": "22:00", "tariff": "hp"}, {"start": "22:00", "end": "06:00", "tariff": "hc"}]},
        {"days": [0, 6], "slots": [{"start": "00:00", "end": "00:00", "tariff": "hc"}]},
    ],
    "prices": {"hp": 0.27, "hc": 0.2},
}
COMPILED = compile_tariff(WEEK)


def utc_ms(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=timezone.utc).timestamp() * 1000)


def at(text: str) -> int:
    """A Paris wall time (unambiguous) as epoch ms."""
    return int(datetime.fromisoformat(text).replace(tzinfo=PARIS).timestamp() * 1000)


# 2026-01-12 is a Monday; 2026-01-17 a Saturday, 2026-01-18 a Sunday.
@pytest.mark.parametrize(
    "local, expected",
    [
        ("2026-01-12T00:00", (0, 30)),  # Monday's own wrapped part 00:00-06:00
        ("2026-01-12T05:30", (0, 30)),
        ("2026-01-12T05:45", (15, 15)),  # 05:45-06:00 hc, 06:00-06:15 hp
        ("2026-01-12T06:00", (30, 0)),
        ("2026-01-12T21:40", (20, 10)),
        ("2026-01-12T22:00", (0, 30)),
        ("2026-01-12T23:50", (0, 10)),  # minutes past midnight count in no slot
        ("2026-01-16T23:45", (0, 15)),  # Friday night
        ("2026-01-17T08:00", (0, 30)),  # Saturday: all day hc
        ("2026-01-18T12:00", (0, 30)),  # Sunday
        ("2026-01-19T05:50", (20, 10)),  # Monday morning is Monday's schedule
    ],
)
def test_window_minutes_over_a_known_week(local, expected):
    assert window_minutes(COMPILED, at(local), PARIS) == expected


def test_split_is_in_proportion_and_adds_up():
    assert split(COMPILED, 100, at("2026-01-12T05:45"), PARIS) == (50, 50)
    assert split(COMPILED, 90, at("2026-01-12T21:40"), PARIS) == (60, 30)
    assert split(COMPILED, 12.5, at("2026-01-12T23:00"), PARIS) == (0, 12.5)
    assert split(COMPILED, 7, at("2026-01-12T12:00"), PARIS) == (7, 0)


def test_classify_says_the_larger_share_and_hp_on_a_tie():
    assert classify(COMPILED, at("2026-01-12T21:40"), PARIS) == "hp"
    assert classify(COMPILED, at("2026-01-12T21:50"), PARIS) == "hc"
    assert classify(COMPILED, at("2026-01-12T05:45"), PARIS) == "hp"
    assert classify(COMPILED, at("2026-01-17T15:00"), PARIS) == "hc"


def test_no_tariff_no_schedule_for_the_day_or_no_overlap_is_all_hp():
    empty = compile_tariff(None)
    assert split(empty, 10, at("2026-01-12T23:00"), PARIS) == (10, 0)
    weekdays_only = compile_tariff({"schedules": [{"days": WEEKDAYS, "slots": [{"start": "22:00", "end": "06:00", "tariff": "hc"}]}]})
    assert split(weekdays_only, 10, at("2026-01-17T23:00"), PARIS) == (10, 0)  # Saturday: no schedule
    assert split(weekdays_only, 10, at("2026-01-12T12:00"), PARIS) == (10, 0)  # no slot overlaps
    no_slots = compile_tariff({"schedules": [{"days": [1], "slots": []}, {"days": [1], "slots": [{"start": "00:00", "end": "00:00", "tariff": "hc"}]}]})
    assert split(no_slots, 10, at("2026-01-12T12:00"), PARIS) == (10, 0)  # the first schedule of the day wins


def test_the_first_schedule_holding_the_day_applies():
    twice = compile_tariff({"schedules": [
        {"days": [1], "slots": [{"start": "00:00", "end": "00:00", "tariff": "hc"}]},
        {"days": [1, 2], "slots": [{"start": "00:00", "end": "00:00", "tariff": "hp"}]},
    ]})
    assert classify(twice, at("2026-01-12T12:00"), PARIS) == "hc"  # Monday
    assert classify(twice, at("2026-01-13T12:00"), PARIS) == "hp"  # Tuesday


def test_spring_forward_2026_03_29():
    # A Sunday; use a weekday-style schedule for every day so that hours matter.
    daily = compile_tariff({"schedules": [{"days": list(range(7)), "slots": [
        {"start": "06:00", "end": "22:00", "tariff": "hp"}, {"start": "22:00", "end": "03:00", "tariff": "hc"}]}]})
    # 00:30 UTC is 01:30 CET: window 01:30-02:00 hc (wall clock, 30 minutes, all before 03:00).
    assert window_minutes(daily, utc_ms(2026, 3, 29, 0, 30), PARIS) == (0, 30)
    # 00:45 UTC is 01:45 CET: wall-clock window 01:45-02:15, all inside the hc slot ending 03:00.
    assert window_minutes(daily, utc_ms(2026, 3, 29, 0, 45), PARIS) == (0, 30)
    # 00:59 UTC is 01:59 CET; one minute later, 01:00 UTC, is 03:00 CEST: out of the hc slot.
    assert classify(daily, utc_ms(2026, 3, 29, 0, 59), PARIS) == "hc"
    assert window_minutes(daily, utc_ms(2026, 3, 29, 1, 0), PARIS) == (0, 0)
    # Peak starts at 06:00 CEST = 04:00 UTC that day (05:00 UTC the day before, in CET).
    assert classify(daily, utc_ms(2026, 3, 29, 3, 59), PARIS) == "hp"  # 05:59 local: 1 min none, 29 hp
    assert window_minutes(daily, utc_ms(2026, 3, 29, 3, 30), PARIS) == (0, 0)  # 05:30 local
    assert window_minutes(daily, utc_ms(2026, 3, 29, 4, 0), PARIS) == (30, 0)  # 06:00 local
    assert window_minutes(daily, utc_ms(2026, 3, 28, 4, 0), PARIS) == (0, 0)  # 05:00 CET the day before
    assert window_minutes(daily, utc_ms(2026, 3, 28, 5, 0), PARIS) == (30, 0)  # 06:00 CET
    # Off-peak starts at 22:00 CEST = 20:00 UTC.
    assert window_minutes(daily, utc_ms(2026, 3, 29, 19, 45), PARIS) == (15, 15)
    assert window_minutes(daily, utc_ms(2026, 3, 29, 20, 0), PARIS) == (0, 30)


def test_fall_back_2026_10_25():
    daily = compile_tariff({"schedules": [{"days": list(range(7)), "slots": [
        {"start": "02:30", "end": "06:00", "tariff": "hc"}, {"start": "06:00", "end": "02:30", "tariff": "hp"}]}]})
    # Local 02:00-03:00 happens twice: 00:00-01:00 UTC (CEST) and 01:00-02:00 UTC (CET).
    # Both passes read the same wall clock and classify alike.
    for first_pass, second_pass, expected in [
        ((0, 0), (1, 0), (30, 0)),  # 02:00: 02:00-02:30 hp
        ((0, 15), (1, 15), (15, 15)),  # 02:15: 15 hp then 15 hc
        ((0, 30), (1, 30), (0, 30)),  # 02:30: hc
    ]:
        assert window_minutes(daily, utc_ms(2026, 10, 25, *first_pass), PARIS) == expected
        assert window_minutes(daily, utc_ms(2026, 10, 25, *second_pass), PARIS) == expected
    # 06:00 CET is 05:00 UTC this day, 04:00 UTC the day before (CEST).
    assert window_minutes(daily, utc_ms(2026, 10, 25, 4, 30), PARIS) == (0, 30)  # 05:30 CET
    assert window_minutes(daily, utc_ms(2026, 10, 25, 5, 0), PARIS) == (30, 0)
    assert window_minutes(daily, utc_ms(2026, 10, 24, 4, 0), PARIS) == (30, 0)  # 06:00 CEST
    # 23:50 UTC on the 24th is 01:50 CEST on the 25th (a Sunday): 01:50-02:20 hp.
    assert window_minutes(daily, utc_ms(2026, 10, 24, 23, 50), PARIS) == (30, 0)
