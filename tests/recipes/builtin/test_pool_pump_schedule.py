"""pool-pump-schedule: ON at each start, OFF at each end (across midnight too), OFF on disable."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest
from tests.inprocess import start

ON, OFF = ("pump", "state", "ON"), ("pump", "state", "OFF")


def test_on_at_the_start_and_off_at_the_end_of_each_window(lab):
    pump = lab.relay("pump", "pool_pump")
    iid = lab.create("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00", slot2Start="15:00", slot2End="17:30")
    assert lab.sent() == []
    assert lab.state(iid)["nextChangeAt"] == "2026-06-15T08:00:00.000Z"  # 10:00 in Paris
    lab.advance_to("2026-06-15 09:59")
    assert lab.sent() == []
    lab.advance_to("2026-06-15 10:00")
    assert lab.sent() == [ON] and lab.state(iid)["pumpOn"] is True
    lab.advance_to("2026-06-15 12:00")
    assert lab.sent() == [ON, OFF]
    lab.advance_to("2026-06-15 18:00")
    assert lab.sent() == [ON, OFF, ON, OFF]
    lab.advance_to("2026-06-16 10:00")  # and again the next day
    assert lab.sent() == [ON, OFF, ON, OFF, ON]


def test_a_window_may_cross_midnight(make_lab):
    lab = make_lab("2026-06-15 20:00")
    pump = lab.relay("pump", "pool_pump")
    lab.create("pool-pump-schedule", pump=pump, slot1Start="22:00", slot1End="02:00")
    lab.advance_to("2026-06-15 22:00")
    assert lab.sent() == [ON]
    lab.advance_to("2026-06-16 01:59")
    assert lab.sent() == [ON]
    lab.advance_to("2026-06-16 02:00")
    assert lab.sent() == [ON, OFF]


def test_created_inside_a_window_it_starts_at_once_and_disabling_sends_off(make_lab):
    lab = make_lab("2026-06-15 23:00")
    pump = lab.relay("pump", "pool_pump")
    iid = lab.create("pool-pump-schedule", pump=pump, slot1Start="22:00", slot1End="02:00")
    assert lab.sent() == [ON]
    lab.recipes.disable(iid)
    assert lab.sent() == [ON, OFF]
    assert lab.state(iid)["pumpOn"] is False
    lab.advance_to("2026-06-16 23:00")  # disabled: the schedule no longer runs
    assert lab.sent() == [ON, OFF]
    lab.recipes.enable(iid)
    assert lab.sent() == [ON, OFF, ON]
    lab.recipes.delete(iid)
    assert lab.sent() == [ON, OFF, ON, OFF]


def test_an_end_passed_while_the_engine_was_down_is_honoured_on_return(make_lab):
    lab = make_lab("2026-06-15 10:30")
    pump = lab.relay("pump", "pool_pump")
    iid = lab.create("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00")
    assert lab.sent() == [ON]
    lab.stop()
    assert lab.sent() == [ON]  # a shutdown sends nothing
    again = make_lab("2026-06-15 13:00", data_dir=lab.data_dir)
    start(again.engine)
    assert again.sent() == [OFF]
    assert again.state(iid)["pumpOn"] is False


def test_windows_are_checked(lab):
    pump = lab.relay("pump", "pool_pump")
    with pytest.raises(BadRequest, match="Invalid params: slot1Start: is required"):
        lab.create("pool-pump-schedule", pump=pump)
    with pytest.raises(BadRequest, match="Invalid params: slot2End: time slot 2 needs a start and an end"):
        lab.create("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="12:00", slot2Start="14:00")
    with pytest.raises(BadRequest, match="Invalid params: slot1End: time slot 1 must not end when it starts"):
        lab.create("pool-pump-schedule", pump=pump, slot1Start="10:00", slot1End="10:00")
    lamp = lab.light("lamp")
    with pytest.raises(BadRequest, match="Invalid params: pump: must be an equipment of type pool_pump or switch or appliance"):
        lab.create("pool-pump-schedule", pump=lamp, slot1Start="10:00", slot1End="12:00")
