"""presence-heater: pilot wire (relay ON = eco, OFF = comfort) following presence and the night."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_motion_means_comfort_and_the_timeout_eco(house):
    heater = house.relay("radiator", kind="heater")
    house.motion_sensor("pir")
    iid = house.recipe("presence-heater", zone=house.zone_id, heaters=[heater], timeout="20m")
    assert house.sent() == [("radiator", "state", "ON")]  # eco
    house.motion(True)
    assert house.sent()[-1] == ("radiator", "state", "OFF")  # comfort
    assert house.recipe_state(iid)["currentMode"] == "comfort"
    house.motion(False)
    house.advance(19 * 60)
    assert len(house.sent()) == 2
    house.advance(60)
    assert house.sent()[-1] == ("radiator", "state", "ON")
    assert house.recipe_state(iid)["currentMode"] == "eco"
    house.advance(3 * 3600)  # the periodic check sends nothing while nothing changes
    assert len(house.sent()) == 3


def test_the_night_window_forces_eco(make_house):
    house = make_house(start="2026-06-15 22:50", zone="Living")
    heater = house.relay("radiator", kind="heater")
    house.motion_sensor("pir")
    house.recipe("presence-heater", zone=house.zone_id, heaters=[heater], nightStart="23:00", nightEnd="06:00")
    house.motion(True)
    assert house.sent() == [("radiator", "state", "ON"), ("radiator", "state", "OFF")]
    house.advance_to("2026-06-15 23:01")
    assert house.sent()[-1] == ("radiator", "state", "ON")
    house.advance_to("2026-06-16 06:01")  # morning, still moving: comfort
    assert house.sent()[-1] == ("radiator", "state", "OFF")


def test_heaters_need_a_state_order_and_the_night_both_ends(house):
    heater = house.relay("radiator", kind="heater")
    bare = house.engine.equipments.create("bare", "heater", house.zone_id)["id"]
    with pytest.raises(BadRequest, match=r"Invalid params: heaters\[0\]: bare has no state order"):
        house.recipe("presence-heater", zone=house.zone_id, heaters=[bare])
    with pytest.raises(BadRequest, match="Invalid params: nightEnd: the night needs a start and an end"):
        house.recipe("presence-heater", zone=house.zone_id, heaters=[heater], nightStart="23:00")
