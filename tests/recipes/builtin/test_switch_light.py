"""switch-light: buttons toggle the lights; the failsafe turns them off after the maximum on time."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_each_press_toggles_all_the_lights(lab):
    lamps = [lab.light("lamp"), lab.light("spot", kind="light_onoff")]
    button = lab.button("button")
    lab.create("switch-light", zone=lab.zone_id, lights=lamps, buttons=[button])
    lab.press()
    assert sorted(lab.sent()) == [("lamp", "state", "ON"), ("spot", "state", "ON")]
    lab.clear()
    lab.press(action="double")
    assert sorted(lab.sent()) == [("lamp", "state", "OFF"), ("spot", "state", "OFF")]
    lab.clear()
    lab.report("spot", state="ON")  # one light on by hand: a press turns everything off
    lab.press()
    assert sorted(lab.sent()) == [("lamp", "state", "OFF"), ("spot", "state", "OFF")]


def test_lights_left_on_are_turned_off_after_the_maximum(lab):
    lamp = lab.light("lamp")
    button = lab.button("button")
    iid = lab.create("switch-light", zone=lab.zone_id, lights=[lamp], buttons=[button], maxOnDuration="30m")
    lab.press()
    assert lab.state(iid)["failsafeExpiresAt"]
    lab.advance(29 * 60)
    assert lab.sent() == [("lamp", "state", "ON")]
    lab.advance(60)
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert "failsafeExpiresAt" not in lab.state(iid)


def test_buttons_are_required_and_must_be_buttons(lab):
    lamp = lab.light("lamp")
    with pytest.raises(BadRequest, match="Invalid params: buttons: is required"):
        lab.create("switch-light", zone=lab.zone_id, lights=[lamp])
    with pytest.raises(BadRequest, match=r"Invalid params: buttons\[0\]: must be an equipment of type button"):
        lab.create("switch-light", zone=lab.zone_id, lights=[lamp], buttons=[lamp])
