"""pool-pump-schedule: ON at each start, OFF at each end (across midnight too), OFF on disable."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest

ON, OFF = ("pump", "state", "ON"), ("pump", "state", "OFF")


def test_on_at_the_start_and_off_at_the_end_of_each_window(house):
    pump = house.relay("pump", kind="pool_pump")
    iid = house.recipe("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00", slot2Start="15:00", slot2End="17:30")
    assert house.sent() == []
    assert house.recipe_state(iid)["nextChangeAt"] == "2026-06-15T08:00:00.000Z"  # 10:00 in Paris
    house.advance_to("2026-06-15 09:59")
    assert house.sent() == []
    house.advance_to("2026-06-15 10:00")
    assert house.sent() == [ON] and house.recipe_state(iid)["pumpOn"] is True
    house.advance_to("2026-06-15 12:00")
    assert house.sent() == [ON, OFF]
    house.advance_to("2026-06-15 18:00")
    assert house.sent() == [ON, OFF, ON, OFF]
    house.advance_to("2026-06-16 10:00")  # and again the next day
    assert house.sent() == [ON, OFF, ON, OFF, ON]


def test_a_window_may_cross_midnight(make_house):
    house = make_house(start="2026-06-15 20:00", zone="Living")
    pump = house.relay("pump", kind="pool_pump")
    house.recipe("pool-pump-schedule", pump=pump, slot1Start="22:00", slot1End="02:00")
    house.advance_to("2026-06-15 22:00")
    assert house.sent() == [ON]
    house.advance_to("2026-06-16 01:59")
    assert house.sent() == [ON]
    house.advance_to("2026-06-16 02:00")
    assert house.sent() == [ON, OFF]


def test_created_inside_a_window_it_starts_at_once_and_disabling_sends_off(make_house):
    house = make_house(start="2026-06-15 23:00", zone="Living")
    pump = house.relay("pump", kind="pool_pump")
    iid = house.recipe("pool-pump-schedule", pump=pump, slot1Start="22:00", slot1End="02:00")
    assert house.sent() == [ON]
    house.recipes.disable(iid)
    assert house.sent() == [ON, OFF]
    assert house.recipe_state(iid)["pumpOn"] is False
    house.advance_to("2026-06-16 23:00")  # disabled: the schedule no longer runs
    assert house.sent() == [ON, OFF]
    house.recipes.enable(iid)
    assert house.sent() == [ON, OFF, ON]
    house.recipes.delete(iid)
    assert house.sent() == [ON, OFF, ON, OFF]


def test_an_end_passed_while_the_engine_was_down_is_honoured_on_return(make_house):
    house = make_house(start="2026-06-15 10:30", zone="Living")
    pump = house.relay("pump", kind="pool_pump")
    iid = house.recipe("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00")
    assert house.sent() == [ON]
    house.stop()
    assert house.sent() == [ON]  # a shutdown sends nothing
    house.restart(at="2026-06-15 13:00")
    house.start()
    assert house.sent() == [OFF]
    assert house.recipe_state(iid)["pumpOn"] is False


def test_windows_are_checked(house):
    pump = house.relay("pump", kind="pool_pump")
    with pytest.raises(BadRequest, match="Invalid params: slot1Start: is required"):
        house.recipe("pool-pump-schedule", pump=pump)
    with pytest.raises(BadRequest, match="Invalid params: slot2End: time slot 2 needs a start and an end"):
        house.recipe("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00", slot2Start="14:00")
    with pytest.raises(BadRequest, match="Invalid params: slot1End: time slot 1 must not end when it starts"):
        house.recipe("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="10:00")
    lamp = house.light("lamp")
    with pytest.raises(BadRequest, match="Invalid params: pump: must be an equipment of type pool_pump or switch or appliance"):
        house.recipe("pool-pump-schedule", pump=lamp, slot1Start="10:00", slot1End="12:00")
