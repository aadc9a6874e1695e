"""auto-watering: valves watered in turn at each slot's local time, skipped for rain, across restarts
and a power cut, on valves that never report (the fake echoes no order back)."""

from __future__ import annotations

import json

import pytest

from hausbox.core.errors import BadRequest
from hausbox.devices.discovery import DataSpec


def on(name: str) -> tuple[str, str, str]:
    return (name, "state", "ON")


def off(name: str) -> tuple[str, str, str]:
    return (name, "state", "OFF")


@pytest.fixture
def garden(make_house):
    """Monday 2026-06-15 08:00 in Paris: two valves that never report, and a weather equipment."""
    house = make_house(start="2026-06-15 08:00", zone="Garden", echo=False)
    front, back = house.relay("front", kind="water_valve"), house.relay("back", kind="water_valve")
    rain = [DataSpec("rain_24h", "number", "rain", "mm"), DataSpec("j1_rain_prob", "number", "generic", "%")]
    meteo = house.equipment("meteo", "weather", [house.device("meteo", rain, online=False)])
    return house, front, back, meteo


def test_a_slot_waters_the_valves_in_turn_every_day(garden):
    house, front, back, _ = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10, back: 5}}])
    assert house.recipe_state(iid) == {"status": "idle", "nextSlot": "2026-06-15T07:00:00.000Z"}
    house.advance_to("2026-06-15 08:59")
    assert house.sent() == []
    house.advance_to("2026-06-15 09:00")
    assert house.sent() == [on("front")]
    state = house.recipe_state(iid)
    assert (state["status"], state["currentSlot"], state["currentValve"]) == ("watering", "09:00", front)
    assert state["valveEndsAt"] == "2026-06-15T07:10:00.000Z" and state["nextSlot"] == "2026-06-16T07:00:00.000Z"
    house.advance_to("2026-06-15 09:09")
    assert house.sent() == [on("front")]
    house.advance_to("2026-06-15 09:10")
    assert house.sent() == [on("front"), off("front"), on("back")]
    house.advance_to("2026-06-15 09:15")
    assert house.sent() == [on("front"), off("front"), on("back"), off("back")]
    state = house.recipe_state(iid)
    assert state["status"] == "idle" and state["currentSlot"] is None and "currentValve" not in state
    house.advance_to("2026-06-16 09:00")
    assert house.sent()[-1] == on("front")


def test_a_slot_is_skipped_when_it_rained_or_rain_is_coming(garden):
    house, front, _, meteo = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10}}], rainEquipment=meteo, rainProbabilityEquipment=meteo)
    house.advance_to("2026-06-15 09:00")  # no reading yet: it waters, and says why it could not check
    assert house.sent() == [on("front")]
    assert any("No number in meteo.rain_24h" in line for line in house.recipe_log(iid))
    house.report("meteo", rain_24h=7.5, j1_rain_prob=10)
    house.advance_to("2026-06-16 09:00")
    assert house.sent() == [on("front"), off("front")]
    state = house.recipe_state(iid)
    assert state["status"] == "skipped" and state["lastSkipReason"] == "7.5 mm of rain over 24 h, above 5 mm"
    house.report("meteo", rain_24h=0.2, j1_rain_prob=80)
    house.advance_to("2026-06-17 09:00")
    assert house.recipe_state(iid)["lastSkipReason"] == "80 % chance of rain tomorrow, above 75 %"
    assert "Slot 09:00 skipped: 80 % chance of rain tomorrow, above 75 %" in house.recipe_log(iid)
    house.report("meteo", rain_24h=5, j1_rain_prob=75)  # at the thresholds, not above
    house.advance_to("2026-06-18 09:00")
    assert house.sent()[-1] == on("front") and house.recipe_state(iid)["status"] == "watering"


def test_thresholds_are_params(garden):
    house, front, _, meteo = garden
    house.report("meteo", rain_24h=7.5)
    house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10}}], rainEquipment=meteo, rainThreshold=10)
    house.advance_to("2026-06-15 09:00")
    assert house.sent() == [on("front")]


def test_a_restart_in_the_middle_goes_on_with_the_turns_left(garden):
    house, front, back, _ = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10, back: 5}}])
    house.advance_to("2026-06-15 09:04")
    before = house.fake
    house.stop()
    assert before.sent == [("front", "state", "ON"), ("front", "state", "OFF")]  # never unattended
    house.restart()
    house.start()
    assert house.sent() == [on("front")]  # the rest of its turn
    assert house.recipe_state(iid)["valveEndsAt"] == "2026-06-15T07:10:00.000Z"
    house.advance_to("2026-06-15 09:10")
    assert house.sent() == [on("front"), off("front"), on("back")]
    house.restart(at="2026-06-15 09:30")  # back once the watering is over
    house.start()
    assert house.sent() == []
    assert house.recipe_state(iid)["status"] == "idle"
    assert house.recipe_state(iid)["nextSlot"] == "2026-06-16T07:00:00.000Z"


def test_after_a_power_cut_the_valve_left_open_is_closed(garden, make_house):
    house, front, back, _ = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10, back: 5}}])
    house.advance_to("2026-06-15 09:12")
    assert house.sent()[-1] == on("back")
    # The power goes: nothing is stopped. Back at 09:20, on the same data.
    back_on = make_house(data_dir=house.data_dir, start="2026-06-15 09:20", echo=False)
    back_on.start()
    assert back_on.sent() == [off("back")]
    assert back_on.recipe_state(iid)["status"] == "idle"


def test_a_slot_whose_time_came_while_down_waters_the_turns_left(garden):
    house, front, back, _ = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10, back: 5}}])
    house.stop()
    house.restart(at="2026-06-15 09:12")
    house.start()
    assert house.sent() == [on("back")]
    house.advance_to("2026-06-15 09:15")
    assert house.sent() == [on("back"), off("back")]
    house.restart(at="2026-06-15 09:14")  # the same slot is not watered twice
    house.start()
    assert house.sent() == []
    assert house.recipe_state(iid)["lastSlotAt"] == "2026-06-15T07:00:00.000Z"


def test_disabling_in_the_middle_closes_the_valve_and_ends_the_watering(garden):
    house, front, back, _ = garden
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10, back: 5}}])
    house.advance_to("2026-06-15 09:03")
    house.recipes.disable(iid)
    assert house.sent() == [on("front"), off("front")]
    assert house.recipe_state(iid)["status"] == "idle"
    house.recipes.enable(iid)  # not watered again: the slot was handled
    house.advance_to("2026-06-15 09:20")
    assert house.sent() == [on("front"), off("front")]


def test_the_slots_keep_their_wall_time_across_the_change_to_summer_time(make_house):
    house = make_house(start="2026-03-28 10:00", zone="Garden", echo=False)
    front = house.relay("front", kind="water_valve")
    iid = house.recipe("auto-watering", slots=[{"time": "09:00", "durations": {front: 10}}])
    assert house.recipe_state(iid)["nextSlot"] == "2026-03-29T07:00:00.000Z"  # 09:00 CEST, not 08:00 UTC
    house.advance_to("2026-03-29 08:59")
    assert house.sent() == []
    house.advance_to("2026-03-29 09:00")
    assert house.sent() == [on("front")]


def test_invalid_params_are_refused_with_a_clear_message(garden):
    house, front, back, meteo = garden
    cases = {
        "slots: is required": {},
        "slots[0]: must be an object": {"slots": ["06:00"]},
        "slots[0].time: must be a time like 06:00": {"slots": [{"time": "25:00", "durations": {front: 10}}]},
        "slots[0]: unknown field days (a slot has time and durations)": {"slots": [{"time": "06:00", "durations": {front: 10}, "days": [1]}]},
        "slots[0].durations: must give at least one valve its minutes": {"slots": [{"time": "06:00", "durations": {}}]},
        "slots[0].durations.nope: equipment not found": {"slots": [{"time": "06:00", "durations": {"nope": 10}}]},
        f"slots[0].durations.{meteo}: must be an equipment of type water_valve or switch (meteo is a weather)": {"slots": [{"time": "06:00", "durations": {meteo: 10}}]},
        f"slots[0].durations.{front}: must be a number of minutes above 0 and at most 720": {"slots": [{"time": "06:00", "durations": {front: 0}}]},
        "slots[1]: starts at 06:20 while slots[0] still waters": {"slots": [{"time": "06:00", "durations": {front: 15, back: 15}}, {"time": "06:20", "durations": {back: 5}}]},
        "slots[1]: starts at 00:05 while slots[0] still waters": {"slots": [{"time": "23:50", "durations": {front: 20}}, {"time": "00:05", "durations": {back: 5}}]},
        "rainAlias: front has no data rain_24h": {"slots": [{"time": "06:00", "durations": {front: 10}}], "rainEquipment": front},
        "rainProbabilityThreshold: must be at most 100": {"slots": [{"time": "06:00", "durations": {front: 10}}], "rainProbabilityThreshold": 120},
    }
    for message, params in cases.items():
        with pytest.raises(BadRequest) as refused:
            house.recipes.create("auto-watering", params)
        assert refused.value.message == f"Invalid params: {message}"
    status, _, body = house.api("POST", "/recipe-instances", {"recipeId": "auto-watering", "params": {"slots": [{"time": "7h", "durations": {front: 10}}]}})
    assert (status, json.loads(body)) == (400, {"error": "Invalid params: slots[0].time: must be a time like 06:00"})
    assert house.recipes.list_json() == [] and house.sent() == []
