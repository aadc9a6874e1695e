"""state-watch: the alarm after a delay, its repeats, the daily check, and its end."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest


def test_an_alarm_after_the_delay_then_repeats_until_the_value_changes(lab):
    door = lab.contact("door")
    lab.report("door", contact=True)
    iid = lab.create("state-watch", zone=lab.zone_id, equipment=door, dataKey="contact", watchValue="false", delay="10m", repeatInterval="5m")
    assert lab.state(iid)["alarm"] is False
    lab.report("door", contact=False)  # opened
    state = lab.state(iid)
    assert state["currentValue"] == "false" and state["watchStartedAt"] and state["alarm"] is False
    lab.advance(9 * 60)
    assert lab.state(iid)["alarm"] is False
    lab.advance(60)
    state = lab.state(iid)
    assert state["alarm"] is True and state["alarmCount"] == 1 and state["alarmSince"]
    entry = lab.recipes.log_entries(iid, 1)[0]
    assert entry["level"] == "warn" and entry["message"] == "Alarm: door.contact has been false for 10min"
    lab.advance(5 * 60)
    assert lab.state(iid)["alarmCount"] == 2
    lab.report("door", contact=True)  # closed
    state = lab.state(iid)
    assert state["alarm"] is False and state["alarmCount"] == 0 and "watchStartedAt" not in state
    lab.advance(3600)
    assert lab.state(iid)["alarm"] is False
    assert any(e["instanceId"] == iid for e in lab.events("recipe.instance.state.changed"))


def test_closing_before_the_delay_raises_nothing(lab):
    door = lab.contact("door")
    iid = lab.create("state-watch", equipment=door, dataKey="contact", watchValue="false", delay="10m")
    lab.report("door", contact=False)
    lab.advance(5 * 60)
    lab.report("door", contact=True)
    lab.advance(3600)
    assert lab.state(iid)["alarm"] is False


def test_the_daily_check_time_raises_the_alarm_if_the_value_is_watched(lab):
    door = lab.contact("door")
    iid = lab.create("state-watch", equipment=door, dataKey="contact", watchValue="false", checkTime="22:00")
    lab.report("door", contact=False)
    lab.advance_to("2026-06-15 21:59")
    assert lab.state(iid)["alarm"] is False
    lab.advance_to("2026-06-15 22:00")
    assert lab.state(iid)["alarm"] is True
    lab.report("door", contact=True)
    lab.advance_to("2026-06-16 22:00")
    assert lab.state(iid)["alarm"] is False


def test_a_timing_is_required_and_the_data_key_must_exist(lab):
    door = lab.contact("door")
    with pytest.raises(BadRequest, match="Invalid params: delay: one of delay, repeatInterval or checkTime is required"):
        lab.create("state-watch", equipment=door, dataKey="contact", watchValue="false")
    with pytest.raises(BadRequest, match="Invalid params: dataKey: door has no data battery"):
        lab.create("state-watch", equipment=door, dataKey="battery", watchValue="5", delay="1m")
    with pytest.raises(BadRequest, match="Invalid params: watchValue: is required"):
        lab.create("state-watch", equipment=door, dataKey="contact", delay="1m")
