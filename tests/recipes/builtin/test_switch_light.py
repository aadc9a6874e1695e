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


ON, OFF = ("lamp", "state", "ON"), ("lamp", "state", "OFF")


@pytest.fixture
def silent(make_house):
    """A lamp that never reports its state (the fake echoes no order back) and a button."""
    house = make_house(start="2026-06-15 08:00", zone="Living", echo=False)
    return house, house.light("lamp"), house.button("button")


def test_presses_toggle_a_light_that_never_reports(silent):
    house, lamp, button = silent
    house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[button])
    house.press()
    house.press()
    house.press()
    assert house.sent() == [ON, OFF, ON]


def test_the_failsafe_turns_off_a_silent_light_even_across_a_restart(silent):
    house, lamp, button = silent
    house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[button], maxOnDuration="30m")
    house.press()
    house.advance(10 * 60)
    house.restart()
    house.start()
    house.advance(20 * 60)
    assert house.sent() == [OFF]  # the new engine's fake
    house.press()  # ordered off: the next press lights it
    assert house.sent() == [OFF, ON]


def test_a_report_of_the_light_replaces_what_was_ordered(silent):
    house, lamp, button = silent
    iid = house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[button], maxOnDuration="30m")
    house.press()
    assert house.recipe_state(iid)["lightsOrderedOn"] == [lamp]
    house.advance(60)
    house.report("lamp", state="OFF")  # switched off at the wall, and it says so
    assert "lightsOrderedOn" not in house.recipe_state(iid) and "failsafeExpiresAt" not in house.recipe_state(iid)
    house.press()
    assert house.sent() == [ON, ON]


def test_buttons_are_required_and_must_be_buttons(house):
    lamp = house.light("lamp")
    with pytest.raises(BadRequest, match="Invalid params: buttons: is required"):
        house.recipe("switch-light", zone=house.zone_id, lights=[lamp])
    with pytest.raises(BadRequest, match=r"Invalid params: buttons\[0\]: must be an equipment of type button"):
        house.recipe("switch-light", zone=house.zone_id, lights=[lamp], buttons=[lamp])
