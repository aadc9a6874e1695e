"""Sunlight in-process, on a ManualClock: sunrise/sunset strings, daylight with offsets, root zone, polar days."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from astral import Observer
from astral.sun import sunrise, sunset

from hausbox.core.errors import BadRequest
from hausbox.system.sunlight import Sunlight

PARIS = ZoneInfo("Europe/Paris")
PARIS_AT = (48.8566, 2.3522)
OSLO = ZoneInfo("Europe/Oslo")
TROMSO_AT = (69.6492, 18.9553)
NULLS = {"sunrise": None, "sunset": None, "isDaylight": None}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def local(day: date, hour: int, minute: int = 0, tz=PARIS) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)


def sun_times(day: date, at=PARIS_AT, tz=PARIS) -> tuple[datetime, datetime]:
    observer = Observer(*at)
    return sunrise(observer, day, tzinfo=tz), sunset(observer, day, tzinfo=tz)


def sunlit(make_house, start: datetime, tz=PARIS, location=PARIS_AT, start_engine: bool = True):
    """A house on a ManualClock at ``start`` with the home at ``location``, its engine started unless
    told: ``(engine, clock, recorder)``, the recorder empty at that point."""
    house = make_house(start=start, tz=tz)
    if location is not None:
        house.engine.settings.set_many({"home.latitude": location[0], "home.longitude": location[1]})
    house.recorder.clear()
    if start_engine:
        house.start()
    return house.engine, house.clock, house.recorder


def root_data(engine) -> dict:
    return engine.aggregator.data(engine.zones.root().id)


def sunlight_timers(engine, clock) -> list:
    return [t for t in clock.pending() if t.fn == engine.sunlight.refresh]


def test_paris_day_daylight_flips_at_the_offset_instants_and_the_root_zone_follows(make_house):
    day = date(2024, 9, 10)
    engine, clock, recorder = sunlit(make_house, local(day, 0, 30))
    rise, fall = sun_times(day)
    assert (rise.hour, fall.hour) == (7, 20)  # Paris in September, summer time: about 07:20 and 20:20
    expected = {"sunrise": rise.strftime("%H:%M"), "sunset": fall.strftime("%H:%M"), "isDaylight": False}
    assert engine.sunlight.snapshot() == expected
    root = root_data(engine)
    assert {k: root[k] for k in expected} == expected
    # Other zones never carry sunlight.
    child = engine.zones.create("Kitchen")
    assert {k: engine.aggregator.data(child["id"])[k] for k in expected} == NULLS
    assert len(sunlight_timers(engine, clock)) == 1  # one timer, no polling
    recorder.clear()

    daylight_start = rise + timedelta(minutes=30)
    clock.set(ms(daylight_start) - 1000)
    assert engine.sunlight.snapshot()["isDaylight"] is False
    assert recorder.of("sunlight.changed") == []
    clock.set(ms(daylight_start))
    assert engine.sunlight.snapshot()["isDaylight"] is True
    assert len(recorder.of("sunlight.changed")) == 1
    assert recorder.of("sunlight.changed")[0] == {"type": "sunlight.changed"}
    changes = [e for e in recorder.of("zone.data.changed") if e["zoneId"] == engine.zones.root().id]
    assert changes and changes[-1]["aggregatedData"]["isDaylight"] is True
    assert changes[-1]["aggregatedData"]["sunrise"] == expected["sunrise"]
    assert root_data(engine)["isDaylight"] is True
    # The zone event comes after the sunlight event that caused it.
    types = recorder.types()
    assert types.index("sunlight.changed") < types.index("zone.data.changed")

    daylight_end = fall - timedelta(minutes=45)
    clock.set(ms(daylight_end) - 1000)
    assert engine.sunlight.snapshot()["isDaylight"] is True
    assert len(recorder.of("sunlight.changed")) == 1
    clock.set(ms(daylight_end))
    assert engine.sunlight.snapshot()["isDaylight"] is False
    assert root_data(engine)["isDaylight"] is False
    assert len(recorder.of("sunlight.changed")) == 2

    # Midnight: the new day's times (September days shorten by minutes a day).
    next_day = day + timedelta(days=1)
    rise2, fall2 = sun_times(next_day)
    clock.set(ms(local(next_day, 0, 0)))
    assert engine.sunlight.snapshot() == {"sunrise": rise2.strftime("%H:%M"), "sunset": fall2.strftime("%H:%M"), "isDaylight": False}
    assert len(recorder.of("sunlight.changed")) == 3
    assert root_data(engine)["sunrise"] == rise2.strftime("%H:%M")
    assert len(sunlight_timers(engine, clock)) == 1


def test_offsets_come_from_settings_and_apply_at_once(make_house):
    day = date(2024, 9, 10)
    rise, fall = sun_times(day)
    engine, clock, recorder = sunlit(make_house, rise + timedelta(minutes=10))
    assert engine.sunlight.snapshot()["isDaylight"] is False  # 10 min after sunrise, default offset 30
    recorder.clear()
    engine.settings.set_many({"home.sunriseOffset": "5"})  # strings are what the UI sends
    assert engine.sunlight.snapshot()["isDaylight"] is True
    assert len(recorder.of("sunlight.changed")) == 1
    engine.settings.set_many({"home.sunriseOffset": 15})
    assert engine.sunlight.snapshot()["isDaylight"] is False
    # The timer was re-aimed at the new start: sunrise + 15 min.
    clock.set(ms(rise + timedelta(minutes=15)))
    assert engine.sunlight.snapshot()["isDaylight"] is True
    # A negative sunset offset stretches daylight past sunset.
    engine.settings.set_many({"home.sunsetOffset": -20})
    clock.set(ms(fall + timedelta(minutes=19)))
    assert engine.sunlight.snapshot()["isDaylight"] is True
    clock.set(ms(fall + timedelta(minutes=20)))
    assert engine.sunlight.snapshot()["isDaylight"] is False
    # A home.* key that changes nothing sunlight shows: no event.
    recorder.clear()
    engine.settings.set_many({"home.name": "Chez nous"})
    assert recorder.of("sunlight.changed") == []


def test_three_days_over_the_spring_change_match_the_formula_at_every_step(make_house):
    """Step through 29-31 March 2024 (Paris moves to summer time on the 31st) every 7 minutes."""
    start = local(date(2024, 3, 29), 0, 0)
    engine, clock, recorder = sunlit(make_house, start)
    seen = [engine.sunlight.snapshot()]
    now = start.astimezone(timezone.utc)
    end = now + timedelta(days=3)
    while now < end:
        now += timedelta(minutes=7)
        clock.set(ms(now))
        day = now.astimezone(PARIS).date()
        rise, fall = sun_times(day)
        daylight = rise + timedelta(minutes=30) <= now < fall - timedelta(minutes=45)
        snapshot = engine.sunlight.snapshot()
        assert snapshot == {"sunrise": rise.strftime("%H:%M"), "sunset": fall.strftime("%H:%M"), "isDaylight": daylight}, now
        if snapshot != seen[-1]:
            seen.append(snapshot)
    assert sum(1 for s in seen if s["isDaylight"]) == 3  # three daylight spells
    assert len(recorder.of("sunlight.changed")) == len(seen) - 1  # one event per change, none without
    assert seen[-1]["sunrise"] > "07:00"  # after the change sunrise is an hour later on the clock


def test_polar_day_and_night_do_not_crash(make_house):
    # Tromso, hour by hour through the weeks where the midnight sun begins: always a consistent state.
    engine, clock, recorder = sunlit(make_house, local(date(2024, 5, 12), 0, 0, OSLO), tz=OSLO, location=TROMSO_AT)
    for _ in range(24 * 14):
        clock.advance(3600)
        snapshot = engine.sunlight.snapshot()
        assert isinstance(snapshot["isDaylight"], bool)
        for key in ("sunrise", "sunset"):
            assert snapshot[key] is None or len(snapshot[key]) == 5
        assert len(sunlight_timers(engine, clock)) == 1
    # Midnight sun: no sunrise, no sunset, daylight all day.
    assert engine.sunlight.snapshot() == {"sunrise": None, "sunset": None, "isDaylight": True}
    assert root_data(engine)["isDaylight"] is True
    clock.set(ms(local(date(2024, 6, 21), 23, 59, OSLO)))
    assert engine.sunlight.snapshot() == {"sunrise": None, "sunset": None, "isDaylight": True}
    # Polar night: none at all, even at noon.
    clock.set(ms(local(date(2024, 12, 21), 12, 0, OSLO)))
    assert engine.sunlight.snapshot() == {"sunrise": None, "sunset": None, "isDaylight": False}
    assert root_data(engine)["isDaylight"] is False
    assert len(sunlight_timers(engine, clock)) == 1


def test_no_coordinates_all_null_and_no_timer(make_house):
    engine, clock, recorder = sunlit(make_house, local(date(2024, 9, 10), 12, 0), location=None)
    assert engine.sunlight.snapshot() == NULLS
    root = root_data(engine)
    assert {k: root[k] for k in NULLS} == NULLS
    assert sunlight_timers(engine, clock) == []
    clock.advance(2 * 86400)
    assert recorder.of("sunlight.changed") == []
    # Only one coordinate: still nothing.
    engine.settings.set_many({"home.latitude": 48.85})
    assert engine.sunlight.snapshot() == NULLS
    assert recorder.of("sunlight.changed") == []
    # Both: values at once, then removing one clears them again.
    engine.settings.set_many({"home.longitude": "2.35"})
    assert engine.sunlight.snapshot()["isDaylight"] is True
    assert len(recorder.of("sunlight.changed")) == 1
    assert root_data(engine)["isDaylight"] is True
    engine.settings.set_many({"home.longitude": None})
    assert engine.sunlight.snapshot() == NULLS
    assert {k: root_data(engine)[k] for k in NULLS} == NULLS
    assert len(recorder.of("sunlight.changed")) == 2
    assert sunlight_timers(engine, clock) == []


def test_state_is_known_before_start_and_stop_cancels_the_timer(make_house):
    engine, clock, recorder = sunlit(make_house, local(date(2024, 9, 10), 12, 0), start_engine=False)
    # Set before the engine started: the root zone already shows it, nothing scheduled yet.
    assert engine.sunlight.snapshot()["isDaylight"] is True
    assert sunlight_timers(engine, clock) == []
    engine.sunlight.start()
    [timer] = sunlight_timers(engine, clock)
    engine.sunlight.stop()
    assert not timer.active


def test_location_settings_are_validated_and_moving_asks_for_a_restart(make_house):
    engine, clock, recorder = sunlit(make_house, local(date(2024, 9, 10), 12, 0), location=None)
    for key, bad in (("home.latitude", "north"), ("home.latitude", 91), ("home.longitude", -180.5), ("home.latitude", True), ("home.sunriseOffset", "soon")):
        with pytest.raises(BadRequest) as refused:
            engine.settings.set_many({"home.name": "x", key: bad})
        assert key in refused.value.message
    assert engine.settings.get("home.name") is None  # refused as a whole
    assert recorder.of("system.restart_required") == []
    engine.settings.set_many({"home.latitude": "48.8566", "home.longitude": 2.3522})
    assert recorder.of("system.restart_required") == [{"type": "system.restart_required", "reason": "home_location_changed"}]
    engine.settings.set_many({"home.sunriseOffset": 10})
    assert len(recorder.of("system.restart_required")) == 1  # offsets do not move the home
    engine.settings.set_many({"home.latitude": None})  # deleting is always allowed
    assert len(recorder.of("system.restart_required")) == 2


def test_sunlight_service_alone_with_string_coordinates(make_house):
    """The service needs only a bus, settings and a clock (what a recipe test would build)."""
    engine = make_house(start=local(date(2024, 9, 10), 3, 0)).engine
    engine.settings.set_many({"home.latitude": "48.8566", "home.longitude": "2.3522"})
    service = Sunlight(engine.bus, engine.settings, engine.clock)
    assert service.snapshot() == engine.sunlight.snapshot()
    assert service.snapshot()["isDaylight"] is False
