"""motion-light-dimmable: brightness by time slot (slots may cross midnight), manual dimming override."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


@pytest.fixture
def room(lab):
    lamp = lab.light("lamp")
    lab.motion_sensor("pir")
    return lab, lamp


def test_lights_on_at_the_default_brightness(room):
    lab, lamp = room
    lab.create("motion-light-dimmable", zone=lab.zone_id, lights=[lamp], brightness=180)
    lab.motion(True)
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "brightness", 180)]


def test_the_first_matching_time_slot_sets_the_brightness_even_past_midnight(make_lab):
    lab = make_lab("2026-06-15 23:30")
    lamp = lab.light("lamp")
    lab.motion_sensor("pir")
    iid = lab.create(
        "motion-light-dimmable", zone=lab.zone_id, lights=[lamp], timeout="1m",
        slot1Start="22:00", slot1End="06:00", slot1Brightness=20,
        slot2Start="05:00", slot2End="09:00", slot2Brightness=120,
    )  # fmt: skip
    lab.motion(True)
    assert lab.sent("brightness") == [("lamp", "brightness", 20)]
    lab.motion(False)
    lab.advance(60)
    lab.advance_to("2026-06-16 05:30")  # inside both: the first slot wins
    lab.motion(True)
    assert lab.sent("brightness")[-1] == ("lamp", "brightness", 20)
    lab.motion(False)
    lab.advance(60)
    lab.advance_to("2026-06-16 07:00")
    lab.motion(True)
    assert lab.sent("brightness")[-1] == ("lamp", "brightness", 120)
    lab.motion(False)
    lab.advance(60)
    lab.advance_to("2026-06-16 12:00")
    lab.motion(True)
    assert lab.sent("brightness")[-1] == ("lamp", "brightness", 254)  # the default
    assert lab.state(iid).get("overrideMode") in (None, False)  # the brightness echoes were ignored


def test_a_manual_brightness_change_is_an_override(room):
    lab, lamp = room
    iid = lab.create("motion-light-dimmable", zone=lab.zone_id, lights=[lamp], timeout="5m")
    lab.motion(True)
    lab.report("lamp", brightness=10)  # the light settling right after the order: not the user
    assert lab.state(iid).get("overrideMode") in (None, False)
    lab.advance(10)
    lab.report("lamp", brightness=60)  # later, the user dims it
    assert lab.state(iid)["overrideMode"] is True
    lab.motion(False)
    lab.advance(5 * 60)  # quiet for the timeout: override over, light off
    assert lab.state(iid)["overrideMode"] is False
    assert lab.sent()[-1] == ("lamp", "state", "OFF")


def test_a_time_slot_is_all_or_nothing(room):
    lab, lamp = room
    with pytest.raises(BadRequest, match="Invalid params: slot1Brightness: time slot 1 needs a start, an end and a brightness"):
        lab.create("motion-light-dimmable", zone=lab.zone_id, lights=[lamp], slot1Start="22:00", slot1End="06:00")
    with pytest.raises(BadRequest, match="Invalid params: slot2Start: must be a time like 07:30"):
        lab.create("motion-light-dimmable", zone=lab.zone_id, lights=[lamp], slot2Start="25:00")
    with pytest.raises(BadRequest, match="Invalid params: brightness: must be at most 254"):
        lab.create("motion-light-dimmable", zone=lab.zone_id, lights=[lamp], brightness=300)
