"""motion-light-dimmable: brightness by time slot (slots may cross midnight), manual dimming override."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


@pytest.fixture
def room(house):
    lamp = house.light("lamp")
    house.motion_sensor("pir")
    return house, lamp


def test_lights_on_at_the_default_brightness(room):
    house, lamp = room
    house.recipe("motion-light-dimmable", zone=house.zone_id, lights=[lamp], brightness=180)
    house.motion(True)
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "brightness", 180)]


def test_the_first_matching_time_slot_sets_the_brightness_even_past_midnight(make_house):
    house = make_house(start="2026-06-15 23:30", zone="Living")
    lamp = house.light("lamp")
    house.motion_sensor("pir")
    iid = house.recipe(
        "motion-light-dimmable", zone=house.zone_id, lights=[lamp], timeout="1m",
        slot1Start="22:00", slot1End="06:00", slot1Brightness=20,
        slot2Start="05:00", slot2End="09:00", slot2Brightness=120,
    )  # fmt: skip
    house.motion(True)
    assert house.sent("brightness") == [("lamp", "brightness", 20)]
    house.motion(False)
    house.advance(60)
    house.advance_to("2026-06-16 05:30")  # inside both: the first slot wins
    house.motion(True)
    assert house.sent("brightness")[-1] == ("lamp", "brightness", 20)
    house.motion(False)
    house.advance(60)
    house.advance_to("2026-06-16 07:00")
    house.motion(True)
    assert house.sent("brightness")[-1] == ("lamp", "brightness", 120)
    house.motion(False)
    house.advance(60)
    house.advance_to("2026-06-16 12:00")
    house.motion(True)
    assert house.sent("brightness")[-1] == ("lamp", "brightness", 254)  # the default
    assert house.recipe_state(iid).get("overrideMode") in (None, False)  # the brightness echoes were ignored


def test_a_manual_brightness_change_is_an_override(room):
    house, lamp = room
    iid = house.recipe("motion-light-dimmable", zone=house.zone_id, lights=[lamp], timeout="5m")
    house.motion(True)
    house.report("lamp", brightness=10)  # the light settling right after the order: not the user
    assert house.recipe_state(iid).get("overrideMode") in (None, False)
    house.advance(10)
    house.report("lamp", brightness=60)  # later, the user dims it
    assert house.recipe_state(iid)["overrideMode"] is True
    house.motion(False)
    house.advance(5 * 60)  # quiet for the timeout: override over, light off
    assert house.recipe_state(iid)["overrideMode"] is False
    assert house.sent()[-1] == ("lamp", "state", "OFF")


def test_a_time_slot_is_all_or_nothing(room):
    house, lamp = room
    with pytest.raises(BadRequest, match="Invalid params: slot1Brightness: time slot 1 needs a start, an end and a brightness"):
        house.recipe("motion-light-dimmable", zone=house.zone_id, lights=[lamp], slot1Start="22:00", slot1End="06:00")
    with pytest.raises(BadRequest, match="Invalid params: slot2Start: must be a time like 07:30"):
        house.recipe("motion-light-dimmable", zone=house.zone_id, lights=[lamp], slot2Start="25:00")
    with pytest.raises(BadRequest, match="Invalid params: brightness: must be at most 254"):
        house.recipe("motion-light-dimmable", zone=house.zone_id, lights=[lamp], brightness=300)
