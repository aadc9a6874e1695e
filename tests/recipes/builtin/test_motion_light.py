"""motion-light driven through device messages: motion, timeout, lux, override, buttons, failsafe."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest

ON, OFF = ("lamp", "state", "ON"), ("lamp", "state", "OFF")


@pytest.fixture
def room(lab):
    lab.light("lamp")
    lab.motion_sensor("pir")
    lab.button("button")
    return lab


def instance(lab, **params):
    eq = {e.name: e.id for e in lab.engine.equipments.all()}
    return lab.create("motion-light", zone=lab.zone_id, lights=[eq["lamp"]], **params)


def test_motion_turns_the_lights_on_and_quiet_turns_them_off_after_the_timeout(room):
    lab = room
    iid = instance(lab, timeout="10m")
    assert lab.sent() == []
    lab.motion(True)
    assert lab.sent() == [ON]
    # The device's echo of the recipe's own order is not a manual change.
    assert lab.state(iid).get("overrideMode") in (None, False)
    lab.motion(False)
    assert lab.state(iid)["timerExpiresAt"]
    lab.advance(9 * 60)
    assert lab.sent() == [ON]
    lab.advance(60)
    assert lab.sent() == [ON, OFF]
    assert "timerExpiresAt" not in lab.state(iid)
    assert "Lights off (no motion for 10min)" in lab.log(iid)
    source = lab.events("equipment.order.executed")[-1]["source"]
    assert source == {"kind": "recipe", "instanceId": iid, "recipeName": "Motion light"}


def test_motion_again_before_the_timeout_keeps_the_lights_on(room):
    lab = room
    instance(lab, timeout="5m")
    lab.motion(True)
    lab.motion(False)
    lab.advance(4 * 60)
    lab.motion(True)
    lab.advance(30 * 60)
    assert lab.sent() == [ON]
    lab.motion(False)
    lab.advance(5 * 60)
    assert lab.sent() == [ON, OFF]


def test_no_lighting_above_the_lux_threshold_and_off_when_daylight_comes(room):
    lab = room
    instance(lab, luxThreshold=50)
    lab.motion(True, illuminance=200)
    assert lab.sent() == []
    lab.motion(True, illuminance=20)  # dusk: still moving, now dark enough
    assert lab.sent() == [ON]
    lab.motion(True, illuminance=54)  # within the 10 % margin: stays on
    assert lab.sent() == [ON]
    lab.motion(True, illuminance=60)  # above threshold x 1.1
    assert lab.sent() == [ON, OFF]


def test_a_manual_off_during_motion_is_an_override_until_the_zone_is_quiet(room):
    lab = room
    iid = instance(lab, timeout="10m")
    lab.motion(True)
    lab.report("lamp", state="OFF")  # the user switches it off at the wall
    assert lab.state(iid)["overrideMode"] is True
    lab.motion(True, illuminance=5)  # more motion: the recipe leaves the light alone
    assert lab.sent() == [ON]
    lab.motion(False)
    lab.advance(10 * 60)
    assert lab.state(iid)["overrideMode"] is False
    lab.motion(True)
    assert lab.sent() == [ON, ON]


def test_a_manual_on_without_motion_is_turned_off_after_the_timeout(room):
    lab = room
    instance(lab, timeout="2m")
    lab.report("lamp", state="ON")
    lab.advance(2 * 60)
    assert lab.sent() == [OFF]


def test_a_button_toggles_the_lights(room):
    lab = room
    button = next(e.id for e in lab.engine.equipments.all() if e.name == "button")
    iid = instance(lab, timeout="10m", buttons=[button])
    lab.press()
    assert lab.sent() == [ON]
    assert lab.state(iid)["timerExpiresAt"]  # no motion: it will go off on its own
    lab.press(action="single")  # the same action again is still a press
    assert lab.sent() == [ON, OFF]
    lab.motion(True)
    assert lab.sent() == [ON, OFF, ON]
    lab.press()  # off while moving: override, no re-lighting
    lab.motion(True, illuminance=3)
    assert lab.sent() == [ON, OFF, ON, OFF]
    assert lab.state(iid)["overrideMode"] is True


def test_the_failsafe_turns_off_lights_left_on_too_long(room):
    lab = room
    iid = instance(lab, maxOnDuration="1h")
    lab.motion(True)  # a sensor stuck on "motion"
    assert lab.state(iid)["failsafeExpiresAt"]
    lab.advance(3600)
    assert lab.sent() == [ON, OFF]
    lab.motion(True, illuminance=1)
    assert lab.sent() == [ON, OFF]  # not re-lit while the motion lasts


def test_no_lighting_in_daylight_when_asked(room):
    lab = room
    aggregator = lab.engine.aggregator
    aggregator.root_extras = lambda: {"sunrise": None, "sunset": None, "isDaylight": True}
    aggregator.recompute_all(silent=True)
    instance(lab, disableWhenDaylight=True)
    lab.motion(True)
    assert lab.sent() == []


def test_lights_outside_the_zone_or_without_a_state_order_are_refused(room):
    lab = room
    other = lab.engine.zones.create("Garage", lab.engine.zones.root().id)["id"]
    far = lab.light("far", zone_id=other)
    with pytest.raises(BadRequest, match=r"Invalid params: lights\[0\]: far is not in the zone"):
        lab.create("motion-light", zone=lab.zone_id, lights=[far])
    with pytest.raises(BadRequest, match=r"Invalid params: timeout: must be a duration like 10m"):
        instance(lab, timeout="ten minutes")
    with pytest.raises(BadRequest, match=r"Invalid params: lights: is required"):
        lab.create("motion-light", zone=lab.zone_id, lights=[])
