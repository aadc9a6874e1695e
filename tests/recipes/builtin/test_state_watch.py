"""state-watch: the alarm after a delay, its repeats, the daily check, and its end."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_an_alarm_after_the_delay_then_repeats_until_the_value_changes(house):
    door = house.contact("door")
    house.report("door", contact=True)
    iid = house.recipe("state-watch", zone=house.zone_id, equipment=door, dataKey="contact", watchValue="false", delay="10m", repeatInterval="5m")
    assert house.recipe_state(iid)["alarm"] is False
    house.report("door", contact=False)  # opened
    state = house.recipe_state(iid)
    assert state["currentValue"] == "false" and state["watchStartedAt"] and state["alarm"] is False
    house.advance(9 * 60)
    assert house.recipe_state(iid)["alarm"] is False
    house.advance(60)
    state = house.recipe_state(iid)
    assert state["alarm"] is True and state["alarmCount"] == 1 and state["alarmSince"]
    entry = house.recipes.log_entries(iid, 1)[0]
    assert entry["level"] == "warn" and entry["message"] == "Alarm: door.contact has been false for 10min"
    house.advance(5 * 60)
    assert house.recipe_state(iid)["alarmCount"] == 2
    house.report("door", contact=True)  # closed
    state = house.recipe_state(iid)
    assert state["alarm"] is False and state["alarmCount"] == 0 and "watchStartedAt" not in state
    house.advance(3600)
    assert house.recipe_state(iid)["alarm"] is False
    assert any(e["instanceId"] == iid for e in house.events("recipe.instance.state.changed"))


def test_closing_before_the_delay_raises_nothing(house):
    door = house.contact("door")
    iid = house.recipe("state-watch", equipment=door, dataKey="contact", watchValue="false", delay="10m")
    house.report("door", contact=False)
    house.advance(5 * 60)
    house.report("door", contact=True)
    house.advance(3600)
    assert house.recipe_state(iid)["alarm"] is False


def test_the_daily_check_time_raises_the_alarm_if_the_value_is_watched(house):
    door = house.contact("door")
    iid = house.recipe("state-watch", equipment=door, dataKey="contact", watchValue="false", checkTime="22:00")
    house.report("door", contact=False)
    house.advance_to("2026-06-15 21:59")
    assert house.recipe_state(iid)["alarm"] is False
    house.advance_to("2026-06-15 22:00")
    assert house.recipe_state(iid)["alarm"] is True
    house.report("door", contact=True)
    house.advance_to("2026-06-16 22:00")
    assert house.recipe_state(iid)["alarm"] is False


def test_a_timing_is_required_and_the_data_key_must_exist(house):
    door = house.contact("door")
    with pytest.raises(BadRequest, match="Invalid params: delay: one of delay, repeatInterval or checkTime is required"):
        house.recipe("state-watch", equipment=door, dataKey="contact", watchValue="false")
    with pytest.raises(BadRequest, match="Invalid params: dataKey: door has no data battery"):
        house.recipe("state-watch", equipment=door, dataKey="battery", watchValue="5", delay="1m")
    with pytest.raises(BadRequest, match="Invalid params: watchValue: is required"):
        house.recipe("state-watch", equipment=door, dataKey="contact", delay="1m")
