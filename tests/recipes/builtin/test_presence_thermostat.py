"""presence-thermostat: eco, comfort on presence, night window, preheat, cocoon, and set_mode."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest

SETPOINT = "occupied_heating_setpoint"  # bound under its zigbee2mqtt name: found by its category


def setpoints(house):
    return [value for _, key, value in house.sent(SETPOINT)]


@pytest.fixture
def room(house):
    trv = house.thermostat("trv")
    house.motion_sensor("pir")
    return house, trv


def test_eco_when_empty_comfort_with_presence_then_eco_after_the_timeout(room):
    house, trv = room
    iid = house.recipe("presence-thermostat", zone=house.zone_id, thermostat=trv, comfortTemp=21, ecoTemp=17, timeout="30m")
    assert setpoints(house) == [17]
    assert house.recipe_state(iid)["currentMode"] == "eco"
    house.motion(True)
    assert setpoints(house) == [17, 21]
    house.motion(False)
    house.advance(29 * 60)
    assert setpoints(house) == [17, 21]
    assert house.recipe_state(iid)["presenceExpiresAt"]
    house.advance(60)
    assert setpoints(house) == [17, 21, 17]
    assert house.recipe_state(iid)["currentMode"] == "eco"


def test_the_night_window_wins_over_presence_and_crosses_midnight(make_house):
    house = make_house(start="2026-06-15 21:00", zone="Living")
    trv = house.thermostat("trv")
    house.motion_sensor("pir")
    iid = house.recipe("presence-thermostat", zone=house.zone_id, thermostat=trv, nightTemp=16, nightStart="22:00", nightEnd="06:30")
    house.motion(True)
    assert setpoints(house) == [17, 20]
    house.advance_to("2026-06-15 22:01")  # the periodic check sees the night
    assert setpoints(house) == [17, 20, 16]
    assert house.recipe_state(iid)["currentMode"] == "night"
    house.advance_to("2026-06-16 06:31")  # the motion never stopped: comfort again
    assert setpoints(house) == [17, 20, 16, 20]


def test_preheat_windows_differ_on_weekdays_and_weekends(make_house):
    house = make_house(start="2026-06-19 06:00", zone="Living")  # a Friday
    trv = house.thermostat("trv")
    house.motion_sensor("pir")
    house.recipe(
        "presence-thermostat", zone=house.zone_id, thermostat=trv,
        weekdayPreheatStart="06:30", weekdayPreheatEnd="08:00", weekendPreheatStart="08:30", weekendPreheatEnd="10:00",
    )  # fmt: skip
    house.advance_to("2026-06-19 06:31")
    assert setpoints(house) == [17, 20]
    house.advance_to("2026-06-19 08:01")
    assert setpoints(house) == [17, 20, 17]
    house.advance_to("2026-06-20 06:31")  # Saturday: not yet
    assert setpoints(house) == [17, 20, 17]
    house.advance_to("2026-06-20 08:31")
    assert setpoints(house) == [17, 20, 17, 20]


def test_cocoon_buttons_and_the_set_mode_action(room):
    house, trv = room
    button = house.button("button")
    iid = house.recipe("presence-thermostat", zone=house.zone_id, thermostat=trv, cocoonButtons=[button], cocoonTemp=23)
    house.press()
    assert setpoints(house) == [17, 23] and house.recipe_state(iid)["currentMode"] == "cocoon"
    house.press()
    assert setpoints(house) == [17, 23, 17]
    assert house.recipes.run_action(iid, "set_mode", {"mode": "comfort"}) == {"ok": True}
    assert setpoints(house) == [17, 23, 17, 20] and house.recipe_state(iid)["currentMode"] == "comfort"
    house.advance(10 * 60)  # a manual mode holds until the automatic mode changes
    assert setpoints(house)[-1] == 20
    house.recipes.run_action(iid, "set_mode", None)  # no payload: the next mode
    assert house.recipe_state(iid)["currentMode"] == "eco"
    with pytest.raises(BadRequest, match="mode: must be one of comfort, eco, night, cocoon"):
        house.recipes.run_action(iid, "set_mode", {"mode": "sauna"})
    with pytest.raises(BadRequest, match="action must be one of set_mode"):
        house.recipes.run_action(iid, "boost", None)


def test_a_thermostat_without_a_setpoint_order_and_half_groups_are_refused(house):
    trv = house.thermostat("trv")
    plain = house.engine.equipments.create("bare", "thermostat", house.zone_id)["id"]
    with pytest.raises(BadRequest, match="Invalid params: thermostat: it has no setpoint order"):
        house.recipe("presence-thermostat", zone=house.zone_id, thermostat=plain)
    with pytest.raises(BadRequest, match="Invalid params: nightStart: required with nightTemp"):
        house.recipe("presence-thermostat", zone=house.zone_id, thermostat=trv, nightTemp=16)
    with pytest.raises(BadRequest, match="Invalid params: comfortTemp: must be at most 30"):
        house.recipe("presence-thermostat", zone=house.zone_id, thermostat=trv, comfortTemp=45)
