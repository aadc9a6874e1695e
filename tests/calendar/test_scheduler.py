"""The calendar in process, on a ManualClock in Europe/Paris: slots fire at local wall time (once
on both 2026 DST transition days), only for the active profile, and follow every change."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hausbox.core.clock import iso_utc
from hausbox.core.errors import BadRequest, NotFound
from tests.inprocess import ROOT, local_ms

EVERY_DAY = [0, 1, 2, 3, 4, 5, 6]


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


class Fired:
    """The clock's time at every mode activation (UTC, minute precision)."""

    def __init__(self, house):
        self.at: list[str] = []
        house.engine.bus.on("mode.activated", lambda _e: self.at.append(utc(house.clock.now_ms())))


def on_off(house, mode, on="02:30", off="12:00", days=EVERY_DAY, profile="work"):
    calendar = house.engine.calendar
    calendar.create_slot(profile, {"days": days, "time": on, "modeActions": [{"modeId": mode, "action": "on"}]})
    calendar.create_slot(profile, {"days": days, "time": off, "modeActions": [{"modeId": mode, "action": "off"}]})


def test_spring_forward_a_slot_in_the_skipped_hour_fires_once_just_after_the_gap(make_house):
    house = make_house(start="2026-03-27 20:00", services=["calendar"])
    mode = house.mode("Night")
    fired = Fired(house)
    on_off(house, mode)
    house.advance_to("2026-03-31 00:00")
    # 02:30 CET = 01:30 UTC; on the 29th 02:30 does not exist: 03:00 CEST = 01:00 UTC; then 00:30 UTC.
    assert fired.at == ["2026-03-28 01:30", "2026-03-29 01:00", "2026-03-30 00:30"]
    assert len(house.events("mode.deactivated")) == 3


def test_fall_back_a_slot_in_the_repeated_hour_fires_once_at_its_first_occurrence(make_house):
    house = make_house(start="2026-10-23 20:00", services=["calendar"])
    mode = house.mode("Night")
    fired = Fired(house)
    on_off(house, mode, off="02:45")  # both in the repeated hour on the 25th
    house.advance_to("2026-10-27 00:00")
    # 02:30 CEST = 00:30 UTC; on the 25th, the first 02:30 (CEST) is 00:30 UTC, not the 01:30 UTC one.
    assert fired.at == ["2026-10-24 00:30", "2026-10-25 00:30", "2026-10-26 01:30"]
    assert len(house.events("mode.deactivated")) == 3


def test_slots_fire_on_their_weekdays_only_and_run_their_actions_in_order(make_house):
    house = make_house(start="2026-03-28 12:00", services=["calendar"])  # a Saturday
    calendar, modes = house.engine.calendar, house.engine.modes
    lamp = house.light("lamp")
    work, weekend = house.mode("Work"), house.mode("Weekend")
    modes.set_impact(work, ROOT, [{"type": "order", "equipmentId": lamp, "orderAlias": "state", "value": "ON"}])
    modes.activate(weekend)
    calendar.create_slot("work", {"days": [1, 2, 3, 4, 5], "time": "07:00", "modeActions": [{"modeId": weekend, "action": "off"}, {"modeId": work, "action": "on"}]})
    house.advance_to("2026-03-30 06:59")  # Sunday passes: nothing
    assert house.sent() == [] and modes.is_active(weekend)
    house.advance_to("2026-03-30 07:00")  # Monday 07:00
    assert house.sent() == [("lamp", "state", "ON")]
    assert not modes.is_active(weekend) and modes.is_active(work)
    kinds = [e["type"] for e in house.recorder.events if e["type"] in ("mode.activated", "mode.deactivated")]
    assert kinds[-2:] == ["mode.deactivated", "mode.activated"]


def test_only_the_active_profile_fires_and_switching_reschedules(house):
    calendar = house.engine.calendar
    mode = house.mode("Lazy")
    fired = Fired(house)
    on_off(house, mode, on="09:00", off="10:00", profile="holidays")
    assert calendar.active_id() == "work"
    assert [s["nextRunAt"] for s in calendar.slots_json("holidays")] == [None, None]
    house.advance_to("2026-03-29 12:00")
    assert fired.at == []

    answer = calendar.set_active("holidays")
    assert answer["profile"]["id"] == "holidays" and len(answer["slots"]) == 2
    assert answer["slots"][0]["nextRunAt"] == iso_utc(local_ms("2026-03-30 09:00"))
    assert [(e["profileId"], e["profileName"]) for e in house.events("calendar.profile.changed")] == [("holidays", "Holidays")]
    calendar.set_active("holidays")  # unchanged: no event
    assert len(house.events("calendar.profile.changed")) == 1
    house.advance_to("2026-03-30 12:00")
    assert fired.at == ["2026-03-30 07:00"]

    # The settings store is the source of truth: changing the setting switches too.
    house.engine.settings.set("calendar.activeProfileId", "work")
    assert [e["profileId"] for e in house.events("calendar.profile.changed")] == ["holidays", "work"]
    house.advance_to("2026-04-01 12:00")
    assert fired.at == ["2026-03-30 07:00"]
    # A setting naming no profile falls back to work (no change, no event).
    house.engine.settings.set("calendar.activeProfileId", "ghost")
    assert calendar.active_id() == "work" and len(house.events("calendar.profile.changed")) == 2
    with pytest.raises(BadRequest, match="profileId: calendar profile not found: ghost"):
        calendar.set_active("ghost")


def test_updates_and_removals_reschedule(house):
    calendar = house.engine.calendar
    mode = house.mode("Eco")
    fired = Fired(house)
    slot = calendar.create_slot("work", {"days": EVERY_DAY, "time": "18:00", "modeActions": [{"modeId": mode, "action": "on"}]})
    assert slot["nextRunAt"] == iso_utc(local_ms("2026-03-28 18:00"))
    moved = calendar.update_slot(slot["id"], {"time": "13:15"})
    assert moved["nextRunAt"] == iso_utc(local_ms("2026-03-28 13:15")) and moved["days"] == EVERY_DAY
    house.advance_to("2026-03-28 20:00")
    assert fired.at == ["2026-03-28 12:15"]
    house.engine.modes.deactivate(mode)
    calendar.update_slot(slot["id"], {"days": [0]})  # Sundays only
    house.advance_to("2026-03-29 20:00")
    assert fired.at == ["2026-03-28 12:15", "2026-03-29 11:15"]
    house.engine.modes.deactivate(mode)
    calendar.delete_slot(slot["id"])
    house.advance_to("2026-04-06 00:00")
    assert len(fired.at) == 2 and house.clock.pending() == []
    with pytest.raises(NotFound):
        calendar.delete_slot(slot["id"])


def test_a_removed_mode_leaves_every_slot(house):
    calendar = house.engine.calendar
    keep, drop = house.mode("Keep"), house.mode("Drop")
    slot = calendar.create_slot("holidays", {"days": [1], "time": "08:00", "modeActions": [{"modeId": drop, "action": "on"}, {"modeId": keep, "action": "off"}]})
    house.engine.modes.delete(drop)
    assert calendar.slots_json("holidays")[0]["modeActions"] == [{"modeId": keep, "action": "off"}]
    house.restart()
    assert house.engine.calendar.slots_json("holidays")[0]["id"] == slot["id"]
    assert house.engine.calendar.slots_json("holidays")[0]["modeActions"] == [{"modeId": keep, "action": "off"}]


def test_a_slot_jumped_over_by_the_clock_is_skipped_and_the_next_one_kept(house, caplog):
    calendar = house.engine.calendar
    mode = house.mode("Morning")
    fired = Fired(house)
    calendar.create_slot("work", {"days": EVERY_DAY, "time": "13:00", "modeActions": [{"modeId": mode, "action": "on"}]})
    # The wall clock jumps three hours ahead at once (NTP after a boot in the past).
    house.clock._now = local_ms("2026-03-28 16:00")
    house.advance_to("2026-03-28 16:00")
    assert fired.at == [] and any("skipped" in r.getMessage() for r in caplog.records)
    assert calendar.slots_json("work")[0]["nextRunAt"] == iso_utc(local_ms("2026-03-29 13:00"))


def test_slots_and_the_active_profile_survive_a_restart(house):
    mode = house.mode("Night")
    on_off(house, mode, on="22:00", off="23:00", profile="holidays")
    house.engine.calendar.set_active("holidays")
    house.restart()
    fired = Fired(house)
    calendar = house.engine.calendar
    assert calendar.active_id() == "holidays"
    assert [s["time"] for s in calendar.active_json()["slots"]] == ["22:00", "23:00"]
    house.advance_to("2026-03-28 22:30")
    assert fired.at == ["2026-03-28 21:00"]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"days": []}, "days must be a non-empty array"),
        ({"days": [1, 1]}, "days[1]: day 1 is listed twice"),
        ({"days": [7]}, "days[0] must be an integer from 0 (Sunday) to 6 (Saturday)"),
        ({"days": [1.5]}, "days[0] must be an integer"),
        ({"days": [True]}, "days[0] must be an integer"),
        ({"days": "1"}, "days must be a non-empty array"),
        ({"time": "7:30"}, "time must be HH:MM"),
        ({"time": "24:00"}, "time must be HH:MM"),
        ({"time": 730}, "time must be a string"),
        ({"modeActions": [{"modeId": "ghost", "action": "on"}]}, "modeActions[0].modeId: mode not found: ghost"),
        ({"modeActions": [{"modeId": "MODE", "action": "toggle"}]}, "modeActions[0].action must be one of on, off"),
        ({"modeActions": [{"action": "on"}]}, "modeActions[0].modeId is required"),
        ({"modeActions": {}}, "modeActions must be an array"),
    ],
)
def test_slots_are_checked_when_written(house, fields, message):
    mode = house.mode("Any")
    body = {"days": [1], "time": "07:00", "modeActions": [{"modeId": mode, "action": "on"}]}
    body.update({k: ([{**a, "modeId": mode} if a.get("modeId") == "MODE" else a for a in v] if k == "modeActions" and isinstance(v, list) else v) for k, v in fields.items()})
    with pytest.raises(BadRequest) as refused:
        house.engine.calendar.create_slot("work", body)
    assert refused.value.message.startswith(message)
    slot = house.engine.calendar.create_slot("work", {"days": [3, 1.0], "time": " 07:05 ", "modeActions": []})
    assert (slot["days"], slot["time"]) == ([1, 3], "07:05")
    with pytest.raises(BadRequest) as refused:
        house.engine.calendar.update_slot(slot["id"], body)
    assert refused.value.message.startswith(message)
