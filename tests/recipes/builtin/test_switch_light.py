"""switch-light: buttons toggle the lights; the failsafe turns them off after the maximum on time."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_each_press_toggles_all_the_lights(house):
    lamps = [house.light("lamp"), house.light("spot", kind="light_onoff")]
    button = house.button("button")
    house.recipe("switch-light", zone=house.zone_id, lights=lamps, buttons=[button])
    house.press()
    assert sorted(house.sent()) == [("lamp", "state", "ON"), ("spot", "state", "ON")]
    house.clear()
    house.press(action="double")
    assert sorted(house.sent()) == [("lamp", "state", "OFF"), ("spot", "state", "OFF")]
    house.clear()
    house.report("spot", state="ON")  # one light on by hand: a press turns everything off
    house.press()
    assert sorted(house.sent()) == [("lamp", "state", "OFF"), ("spot", "state", "OFF")]


def test_lights_left_on_are_turned_off_after_the_maximum(house):
    lamp = house.light("lamp")
    button = house.button("button")
    iid = house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[button], maxOnDuration="30m")
    house.press()
    assert house.recipe_state(iid)["failsafeExpiresAt"]
    house.advance(29 * 60)
    assert house.sent() == [("lamp", "state", "ON")]
    house.advance(60)
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert "failsafeExpiresAt" not in house.recipe_state(iid)


def test_buttons_are_required_and_must_be_buttons(house):
    lamp = house.light("lamp")
    with pytest.raises(BadRequest, match="Invalid params: buttons: is required"):
        house.recipe("switch-light", zone=house.zone_id, lights=[lamp])
    with pytest.raises(BadRequest, match=r"Invalid params: buttons\[0\]: must be an equipment of type button"):
        house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[lamp])
