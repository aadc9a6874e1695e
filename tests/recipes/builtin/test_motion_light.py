"""motion-light driven through device messages: motion, timeout, lux, override, buttons, failsafe."""

from __future__ import annotations

import gevent
import pytest

from hausbox.core.errors import BadRequest

ON, OFF = ("lamp", "state", "ON"), ("lamp", "state", "OFF")


@pytest.fixture
def room(house):
    house.light("lamp")
    house.motion_sensor("pir")
    house.button("button")
    return house


def instance(house, **params):
    eq = {e.name: e.id for e in house.engine.equipments.all()}
    return house.recipe("motion-light", zone=house.zone_id, lights=[eq["lamp"]], **params)


def test_motion_turns_the_lights_on_and_quiet_turns_them_off_after_the_timeout(room):
    house = room
    iid = instance(house, timeout="10m")
    assert house.sent() == []
    house.motion(True)
    assert house.sent() == [ON]
    # The device's echo of the recipe's own order is not a manual change.
    assert house.recipe_state(iid).get("overrideMode") in (None, False)
    house.motion(False)
    assert house.recipe_state(iid)["timerExpiresAt"]
    house.advance(9 * 60)
    assert house.sent() == [ON]
    house.advance(60)
    assert house.sent() == [ON, OFF]
    assert "timerExpiresAt" not in house.recipe_state(iid)
    assert "Lights off (no motion for 10min)" in house.recipe_log(iid)
    source = house.events("equipment.order.executed")[-1]["source"]
    assert source == {"kind": "recipe", "instanceId": iid, "recipeName": "Motion light"}


def test_motion_again_before_the_timeout_keeps_the_lights_on(room):
    house = room
    instance(house, timeout="5m")
    house.motion(True)
    house.motion(False)
    house.advance(4 * 60)
    house.motion(True)
    house.advance(30 * 60)
    assert house.sent() == [ON]
    house.motion(False)
    house.advance(5 * 60)
    assert house.sent() == [ON, OFF]


def test_no_lighting_above_the_lux_threshold_and_off_when_daylight_comes(room):
    house = room
    instance(house, luxThreshold=50)
    house.motion(True, illuminance=200)
    assert house.sent() == []
    house.motion(True, illuminance=20)  # dusk: still moving, now dark enough
    assert house.sent() == [ON]
    house.motion(True, illuminance=54)  # within the 10 % margin: stays on
    assert house.sent() == [ON]
    house.motion(True, illuminance=60)  # above threshold x 1.1
    assert house.sent() == [ON, OFF]


def test_a_manual_off_during_motion_is_an_override_until_the_zone_is_quiet(room):
    house = room
    iid = instance(house, timeout="10m")
    house.motion(True)
    house.report("lamp", state="OFF")  # the user switches it off at the wall
    assert house.recipe_state(iid)["overrideMode"] is True
    house.motion(True, illuminance=5)  # more motion: the recipe leaves the light alone
    assert house.sent() == [ON]
    house.motion(False)
    house.advance(10 * 60)
    assert house.recipe_state(iid)["overrideMode"] is False
    house.motion(True)
    assert house.sent() == [ON, ON]


def test_a_manual_on_without_motion_is_turned_off_after_the_timeout(room):
    house = room
    instance(house, timeout="2m")
    house.report("lamp", state="ON")
    house.advance(2 * 60)
    assert house.sent() == [OFF]


def test_a_button_toggles_the_lights(room):
    house = room
    button = next(e.id for e in house.engine.equipments.all() if e.name == "button")
    iid = instance(house, timeout="10m", buttons=[button])
    house.press()
    assert house.sent() == [ON]
    assert house.recipe_state(iid)["timerExpiresAt"]  # no motion: it will go off on its own
    house.press(action="single")  # the same action again is still a press
    assert house.sent() == [ON, OFF]
    house.motion(True)
    assert house.sent() == [ON, OFF, ON]
    house.press()  # off while moving: override, no re-lighting
    house.motion(True, illuminance=3)
    assert house.sent() == [ON, OFF, ON, OFF]
    assert house.recipe_state(iid)["overrideMode"] is True


def test_the_failsafe_turns_off_lights_left_on_too_long(room):
    house = room
    iid = instance(house, maxOnDuration="1h")
    house.motion(True)  # a sensor stuck on "motion"
    assert house.recipe_state(iid)["failsafeExpiresAt"]
    house.advance(3600)
    assert house.sent() == [ON, OFF]
    house.motion(True, illuminance=1)
    assert house.sent() == [ON, OFF]  # not re-lit while the motion lasts


def test_no_lighting_in_daylight_when_asked(room):
    house = room
    aggregator = house.engine.aggregator
    aggregator.root_extras = lambda: {"sunrise": None, "sunset": None, "isDaylight": True}
    aggregator.recompute_all(silent=True)
    instance(house, disableWhenDaylight=True)
    house.motion(True)
    assert house.sent() == []


def test_lights_outside_the_zone_or_without_a_state_order_are_refused(room):
    house = room
    other = house.engine.zones.create("Garage", house.engine.zones.root().id)["id"]
    far = house.light("far", zone_id=other)
    with pytest.raises(BadRequest, match=r"Invalid params: lights\[0\]: far is not in the zone"):
        house.recipe("motion-light", zone=house.zone_id, lights=[far])
    with pytest.raises(BadRequest, match=r"Invalid params: timeout: must be a duration like 10m"):
        instance(house, timeout="ten minutes")
    with pytest.raises(BadRequest, match=r"Invalid params: lights: is required"):
        house.recipe("motion-light", zone=house.zone_id, lights=[])


# ---- lights that report late or never: what the recipe ordered counts ---------------------------
@pytest.fixture
def silent_room(make_house):
    """The room with a bulb that never reports its state (the fake echoes no order back)."""
    house = make_house(start="2026-06-15 08:00", zone="Living", echo=False)
    house.light("lamp")
    house.motion_sensor("pir")
    house.button("button")
    return house


def test_a_light_that_never_reports_is_turned_off_after_the_timeout(silent_room):
    house = silent_room
    iid = instance(house, timeout="10m")
    house.motion(True)
    house.motion(True, illuminance=30)  # more zone changes while it moves: ordered once
    assert house.sent() == [ON]
    house.motion(False)
    assert house.recipe_state(iid)["timerExpiresAt"]
    house.advance(10 * 60)
    assert house.sent() == [ON, OFF]
    house.motion(True)  # ordered off: motion lights it again
    assert house.sent() == [ON, OFF, ON]


def test_a_second_press_before_a_slow_light_reports_turns_it_off(silent_room):
    house = silent_room
    house.fake.echo, house.fake.echo_delay_s = True, 0.05
    button = next(e.id for e in house.engine.equipments.all() if e.name == "button")
    instance(house, timeout="10m", buttons=[button])
    house.press()
    house.press()  # before the bulb's report of the first order arrives
    assert house.sent() == [ON, OFF]
    gevent.sleep(0.15)
    house.settle()
    assert house.engine.equipments.get(lamp_id(house)).data["state"] == "OFF"
    assert house.sent() == [ON, OFF]


def test_a_report_long_after_the_order_does_not_move_the_timeout(silent_room):
    house = silent_room
    instance(house, timeout="10m")
    house.motion(True)
    house.motion(False)
    house.advance(60)
    house.report("lamp", state="ON")  # the bulb's report, a minute late
    house.advance(9 * 60)
    assert house.sent() == [ON, OFF]


def test_a_restart_keeps_what_the_recipe_ordered(silent_room):
    house = silent_room
    iid = instance(house, timeout="10m")
    house.motion(True)
    house.motion(False)
    house.advance(5 * 60)
    house.restart()
    house.start()
    assert house.sent() == []
    house.advance(5 * 60)
    assert house.sent() == [OFF]
    assert "lightsOrderedOn" not in house.recipe_state(iid)


def test_the_failsafe_and_the_buttons_work_on_a_silent_light(silent_room):
    house = silent_room
    button = next(e.id for e in house.engine.equipments.all() if e.name == "button")
    instance(house, maxOnDuration="1h", buttons=[button])
    house.press()
    house.press()
    assert house.sent() == [ON, OFF]
    house.motion(True)  # a sensor stuck on "motion"
    house.advance(3600)
    assert house.sent() == [ON, OFF, ON, OFF]


def lamp_id(house) -> str:
    return next(e.id for e in house.engine.equipments.all() if e.name == "lamp")
