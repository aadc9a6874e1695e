"""freecooling: the open shutters of the zone tree are closed at sunrise minus the offset, every day,
at the instant the season and daylight saving time give; a close missed while down is done on return."""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest
from astral import Observer
from astral.sun import sunrise

from hausbox.core.clock import iso_utc
from hausbox.core.errors import BadRequest
from hausbox.devices.discovery import DataSpec, OrderSpec
from tests.inprocess import PARIS

PARIS_AT = (48.8566, 2.3522)
HOUR_MS = 3_600_000


def close_at(day: date, offset_min: int = 120) -> int:
    """Sunrise in Paris on ``day`` (astral, independently of the engine) minus the offset, in ms."""
    return int(sunrise(Observer(*PARIS_AT), day, tzinfo=PARIS).timestamp() * 1000) - offset_min * 60_000


def wall(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=PARIS).strftime("%Y-%m-%d %H:%M")


def shutter(house, name: str, zone_id: str | None = None, position: int | None = None) -> str:
    device = house.device(
        name, [DataSpec("position", "number", "shutter_position", "%")],
        [OrderSpec("position", "number", "set_shutter_position", min=0, max=100, unit="%")], online=False,
    )  # fmt: skip
    equipment_id = house.equipment(name, "shutter", [device], zone_id=zone_id)
    if position is not None:
        house.report(name, position=position)
    return equipment_id


def located(make_house, start: str):
    house = make_house(start=start, zone="Living")
    house.engine.settings.set_many({"home.latitude": PARIS_AT[0], "home.longitude": PARIS_AT[1]})
    house.start()
    return house


def closes(house) -> list[str]:
    return sorted(name for name, key, value in house.sent() if key == "position" and value == 0)


def test_the_open_shutters_of_the_zone_tree_close_at_sunrise_minus_the_offset(make_house):
    house = located(make_house, "2026-06-15 08:00")
    bedroom = house.zone("Bedroom", house.zone_id)
    garage = house.zone("Garage")
    shutter(house, "salon", position=100)
    shutter(house, "chambre", bedroom, position=40)
    shutter(house, "ferme", position=0)  # known closed: left alone
    shutter(house, "muet")  # never reported: not known to be closed
    shutter(house, "garage", garage, position=100)  # another zone
    iid = house.recipe("freecooling", zone=house.zone_id)
    at = close_at(date(2026, 6, 16))
    assert house.recipe_state(iid)["nextRunAt"] == iso_utc(at) and wall(at) == "2026-06-16 03:46"
    house.advance_to(at - 1000)
    assert house.sent() == []
    house.advance_to(at)
    assert closes(house) == ["chambre", "muet", "salon"] and len(house.sent()) == 3
    state = house.recipe_state(iid)
    assert state["lastClosed"] == 3 and state["lastRunAt"] == iso_utc(at)
    assert state["nextRunAt"] == iso_utc(close_at(date(2026, 6, 17)))


def test_the_close_follows_the_sunrise_across_the_change_to_summer_time(make_house):
    house = located(make_house, "2026-03-28 00:30")
    shutter(house, "salon", position=100)
    house.recipe("freecooling", zone=house.zone_id, offsetMinutes=120)
    saturday, sunday = close_at(date(2026, 3, 28)), close_at(date(2026, 3, 29))
    assert (wall(saturday), wall(sunday)) == ("2026-03-28 04:37", "2026-03-29 05:35")
    house.advance_to(saturday)
    assert closes(house) == ["salon"]
    house.report("salon", position=100)  # opened again in the evening
    house.advance_to(sunday - HOUR_MS)  # Saturday's wall time: too early on Sunday
    assert closes(house) == ["salon"]
    house.advance_to(sunday - 1000)
    assert closes(house) == ["salon"]
    house.advance_to(sunday)
    assert closes(house) == ["salon", "salon"]


def test_a_close_missed_while_the_engine_was_down_is_done_on_return_before_sunrise(make_house):
    house = located(make_house, "2026-06-15 08:00")
    shutter(house, "salon", position=100)
    iid = house.recipe("freecooling", zone=house.zone_id)
    at = close_at(date(2026, 6, 16))
    house.restart(at=at + 30 * 60_000)  # down at the time, back 30 minutes later: still before sunrise
    house.start()
    assert closes(house) == ["salon"]
    assert "missed while the engine was down" in house.recipe_log(iid)[0]
    house.restart(at=close_at(date(2026, 6, 17)) + 3 * HOUR_MS)  # back after sunrise: too late
    house.start()
    assert house.sent() == []
    assert house.recipe_state(iid)["nextRunAt"] == iso_utc(close_at(date(2026, 6, 18)))


def test_without_the_homes_location_nothing_is_planned_until_it_is_set(make_house):
    house = make_house(start="2026-06-15 08:00", zone="Living")
    house.start()
    shutter(house, "salon", position=100)
    iid = house.recipe("freecooling", zone=house.zone_id)
    assert house.recipe_state(iid)["nextRunAt"] is None
    assert "the home's location is not set" in house.recipe_log(iid)[0]
    house.engine.settings.set_many({"home.latitude": PARIS_AT[0], "home.longitude": PARIS_AT[1]})
    house.settle()
    assert house.recipe_state(iid)["nextRunAt"] == iso_utc(close_at(date(2026, 6, 16)))


def test_invalid_params_are_refused_with_a_clear_message(house):
    with pytest.raises(BadRequest, match="Invalid params: zone: is required"):
        house.recipe("freecooling")
    with pytest.raises(BadRequest, match="Invalid params: offsetMinutes: must be at most 720"):
        house.recipe("freecooling", zone=house.zone_id, offsetMinutes=800)
    status, _, body = house.api("POST", "/recipe-instances", {"recipeId": "freecooling", "params": {"zone": house.zone_id, "offsetMinutes": -5}})
    assert (status, json.loads(body)) == (400, {"error": "Invalid params: offsetMinutes: must be at least 0"})
    assert house.recipes.list_json() == []
