"""presence-heater: pilot wire (relay ON = eco, OFF = comfort) following presence and the night."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_motion_means_comfort_and_the_timeout_eco(lab):
    heater = lab.relay("radiator", "heater")
    lab.motion_sensor("pir")
    iid = lab.create("presence-heater", zone=lab.zone_id, heaters=[heater], timeout="20m")
    assert lab.sent() == [("radiator", "state", "ON")]  # eco
    lab.motion(True)
    assert lab.sent()[-1] == ("radiator", "state", "OFF")  # comfort
    assert lab.state(iid)["currentMode"] == "comfort"
    lab.motion(False)
    lab.advance(19 * 60)
    assert len(lab.sent()) == 2
    lab.advance(60)
    assert lab.sent()[-1] == ("radiator", "state", "ON")
    assert lab.state(iid)["currentMode"] == "eco"
    lab.advance(3 * 3600)  # the periodic check sends nothing while nothing changes
    assert len(lab.sent()) == 3


def test_the_night_window_forces_eco(make_lab):
    lab = make_lab("2026-06-15 22:50")
    heater = lab.relay("radiator", "heater")
    lab.motion_sensor("pir")
    lab.create("presence-heater", zone=lab.zone_id, heaters=[heater], nightStart="23:00", nightEnd="06:00")
    lab.motion(True)
    assert lab.sent() == [("radiator", "state", "ON"), ("radiator", "state", "OFF")]
    lab.advance_to("2026-06-15 23:01")
    assert lab.sent()[-1] == ("radiator", "state", "ON")
    lab.advance_to("2026-06-16 06:01")  # morning, still moving: comfort
    assert lab.sent()[-1] == ("radiator", "state", "OFF")


def test_heaters_need_a_state_order_and_the_night_both_ends(lab):
    heater = lab.relay("radiator", "heater")
    bare = lab.engine.equipments.create("bare", "heater", lab.zone_id)["id"]
    with pytest.raises(BadRequest, match=r"Invalid params: heaters\[0\]: bare has no state order"):
        lab.create("presence-heater", zone=lab.zone_id, heaters=[bare])
    with pytest.raises(BadRequest, match="Invalid params: nightEnd: the night needs a start and an end"):
        lab.create("presence-heater", zone=lab.zone_id, heaters=[heater], nightStart="23:00")
