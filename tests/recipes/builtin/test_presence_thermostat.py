"""presence-thermostat: eco, comfort on presence, night window, preheat, cocoon, and set_mode."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest

SETPOINT = "occupied_heating_setpoint"  # bound under its zigbee2mqtt name: found by its category


def setpoints(lab):
    return [value for _, key, value in lab.sent(SETPOINT)]


@pytest.fixture
def room(lab):
    trv = lab.thermostat("trv")
    lab.motion_sensor("pir")
    return lab, trv


def test_eco_when_empty_comfort_with_presence_then_eco_after_the_timeout(room):
    lab, trv = room
    iid = lab.create("presence-thermostat", zone=lab.zone_id, thermostat=trv, comfortTemp=21, ecoTemp=17, timeout="30m")
    assert setpoints(lab) == [17]
    assert lab.state(iid)["currentMode"] == "eco"
    lab.motion(True)
    assert setpoints(lab) == [17, 21]
    lab.motion(False)
    lab.advance(29 * 60)
    assert setpoints(lab) == [17, 21]
    assert lab.state(iid)["presenceExpiresAt"]
    lab.advance(60)
    assert setpoints(lab) == [17, 21, 17]
    assert lab.state(iid)["currentMode"] == "eco"


def test_the_night_window_wins_over_presence_and_crosses_midnight(make_lab):
    lab = make_lab("2026-06-15 21:00")
    trv = lab.thermostat("trv")
    lab.motion_sensor("pir")
    iid = lab.create("presence-thermostat", zone=lab.zone_id, thermostat=trv, nightTemp=16, nightStart="22:00", nightEnd="06:30")
    lab.motion(True)
    assert setpoints(lab) == [17, 20]
    lab.advance_to("2026-06-15 22:01")  # the periodic check sees the night
    assert setpoints(lab) == [17, 20, 16]
    assert lab.state(iid)["currentMode"] == "night"
    lab.advance_to("2026-06-16 06:31")  # the motion never stopped: comfort again
    assert setpoints(lab) == [17, 20, 16, 20]


def test_preheat_windows_differ_on_weekdays_and_weekends(make_lab):
    lab = make_lab("2026-06-19 06:00")  # a Friday
    trv = lab.thermostat("trv")
    lab.motion_sensor("pir")
    lab.create(
        "presence-thermostat", zone=lab.zone_id, thermostat=trv,
        weekdayPreheatStart="06:30", weekdayPreheatEnd="08:00", weekendPreheatStart="08:30", weekendPreheatEnd="10:00",
    )  # fmt: skip
    lab.advance_to("2026-06-19 06:31")
    assert setpoints(lab) == [17, 20]
    lab.advance_to("2026-06-19 08:01")
    assert setpoints(lab) == [17, 20, 17]
    lab.advance_to("2026-06-20 06:31")  # Saturday: not yet
    assert setpoints(lab) == [17, 20, 17]
    lab.advance_to("2026-06-20 08:31")
    assert setpoints(lab) == [17, 20, 17, 20]


def test_cocoon_buttons_and_the_set_mode_action(room):
    lab, trv = room
    button = lab.button("button")
    iid = lab.create("presence-thermostat", zone=lab.zone_id, thermostat=trv, cocoonButtons=[button], cocoonTemp=23)
    lab.press()
    assert setpoints(lab) == [17, 23] and lab.state(iid)["currentMode"] == "cocoon"
    lab.press()
    assert setpoints(lab) == [17, 23, 17]
    assert lab.recipes.run_action(iid, "set_mode", {"mode": "comfort"}) == {"ok": True}
    assert setpoints(lab) == [17, 23, 17, 20] and lab.state(iid)["currentMode"] == "comfort"
    lab.advance(10 * 60)  # a manual mode holds until the automatic mode changes
    assert setpoints(lab)[-1] == 20
    lab.recipes.run_action(iid, "set_mode", None)  # no payload: the next mode
    assert lab.state(iid)["currentMode"] == "eco"
    with pytest.raises(BadRequest, match="mode: must be one of comfort, eco, night, cocoon"):
        lab.recipes.run_action(iid, "set_mode", {"mode": "sauna"})
    with pytest.raises(BadRequest, match="action must be one of set_mode"):
        lab.recipes.run_action(iid, "boost", None)


def test_a_thermostat_without_a_setpoint_order_and_half_groups_are_refused(lab):
    trv = lab.thermostat("trv")
    plain = lab.engine.equipments.create("bare", "thermostat", lab.zone_id)["id"]
    with pytest.raises(BadRequest, match="Invalid params: thermostat: it has no setpoint order"):
        lab.create("presence-thermostat", zone=lab.zone_id, thermostat=plain)
    with pytest.raises(BadRequest, match="Invalid params: nightStart: required with nightTemp"):
        lab.create("presence-thermostat", zone=lab.zone_id, thermostat=trv, nightTemp=16)
    with pytest.raises(BadRequest, match="Invalid params: comfortTemp: must be at most 30"):
        lab.create("presence-thermostat", zone=lab.zone_id, thermostat=trv, comfortTemp=45)
