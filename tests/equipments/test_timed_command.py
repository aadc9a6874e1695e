"""``timedCommand`` is validated at write time (spec, Equipment resource; Limits: durations, steps)."""

from __future__ import annotations

import json

import pytest

from hausbox.core.errors import BadRequest
from tests.inprocess import relay_order, relay_state

VALID = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 600_000}


@pytest.fixture
def heater(house):
    device = house.device("heater-plug", data=[relay_state("state")], orders=[relay_order("state")])
    return house.equipment("Towel heater", "switch", data={"state": device.data["state"]}, orders={"state": device.orders["state"]})


def _update(house, equipment_id, config):
    return house.engine.equipments.update(equipment_id, {"timedCommand": config})


def test_a_valid_config_is_stored_and_returned(house, heater):
    body = _update(house, heater, VALID)
    assert body["timedCommand"] == VALID


def test_steps_align_the_duration_to_the_first_step(house, heater):
    body = _update(house, heater, {**VALID, "durationMs": 3_600_000, "durationStepsMs": [900_000, 1_800_000, 3_600_000]})
    assert body["timedCommand"]["durationMs"] == 900_000
    assert body["timedCommand"]["durationStepsMs"] == [900_000, 1_800_000, 3_600_000]
    without_duration = {k: v for k, v in VALID.items() if k != "durationMs"}
    body = _update(house, heater, {**without_duration, "durationStepsMs": [60_000, 120_000]})
    assert body["timedCommand"]["durationMs"] == 60_000


def test_null_values_and_unknown_keys(house, heater):
    body = _update(house, heater, {**VALID, "value": None, "revertValue": None, "extra": 1})
    assert body["timedCommand"] == {**VALID, "value": None, "revertValue": None}


def test_null_clears_and_an_absent_key_leaves_it(house, heater):
    _update(house, heater, VALID)
    body = house.engine.equipments.update(heater, {"name": "Renamed"})
    assert body["timedCommand"] == VALID
    assert _update(house, heater, None)["timedCommand"] is None


@pytest.mark.parametrize(
    "config, field",
    [
        ({**VALID, "alias": "missing"}, "alias"),
        ({k: v for k, v in VALID.items() if k != "alias"}, "alias"),
        ({**VALID, "alias": 3}, "alias"),
        ({**VALID, "value": 1}, "value"),
        ({**VALID, "revertValue": True}, "revertValue"),
        ({**VALID, "durationMs": 9_999}, "durationMs"),
        ({**VALID, "durationMs": 86_400_001}, "durationMs"),
        ({**VALID, "durationMs": 60_000.5}, "durationMs"),
        ({**VALID, "durationMs": "60000"}, "durationMs"),
        ({**VALID, "durationMs": True}, "durationMs"),
        ({k: v for k, v in VALID.items() if k != "durationMs"}, "durationMs"),
        ({**VALID, "durationStepsMs": [60_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [60_000, 60_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [120_000, 60_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [5_000, 60_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [60_000, 90_000_000]}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": "60000,120000"}, "durationStepsMs"),
        ({**VALID, "durationStepsMs": [60_000, None]}, "durationStepsMs"),
    ],
)
def test_invalid_configs_are_refused_naming_the_field(house, heater, config, field):
    _update(house, heater, VALID)
    with pytest.raises(BadRequest) as refused:
        _update(house, heater, config)
    assert refused.value.status == 400 and f"timedCommand.{field}" in refused.value.message
    assert house.engine.equipments.to_json(house.engine.equipments.require(heater))["timedCommand"] == VALID, "nothing written"


def test_the_limits_themselves_are_accepted(house, heater):
    assert _update(house, heater, {**VALID, "durationMs": 10_000})["timedCommand"]["durationMs"] == 10_000
    assert _update(house, heater, {**VALID, "durationMs": 86_400_000})["timedCommand"]["durationMs"] == 86_400_000
    steps = [10_000, 20_000, 30_000, 40_000, 50_000, 86_400_000]
    assert _update(house, heater, {**VALID, "durationStepsMs": steps})["timedCommand"]["durationStepsMs"] == steps


def test_an_equipment_without_the_order_is_refused(house):
    device = house.device("thermo", data=[relay_state("state")])
    sensor_only = house.equipment("Sensor only", "switch", data={"state": device.data["state"]})
    with pytest.raises(BadRequest) as refused:
        _update(house, sensor_only, VALID)
    assert "timedCommand.alias" in refused.value.message


def test_the_route_answers_400_json_and_the_config_survives_a_restart(house):
    device = house.device("plug", data=[relay_state("state")], orders=[relay_order("state")])
    plug = house.equipment("Plug", "switch", data={"state": device.data["state"]}, orders={"state": device.orders["state"]})
    status, _, answer = house.api("PUT", f"/equipments/{plug}", {"timedCommand": {**VALID, "alias": "nope"}})
    assert status == 400 and "timedCommand.alias" in json.loads(answer)["error"]
    status, _, answer = house.api("PUT", f"/equipments/{plug}", {"timedCommand": "soon"})
    assert status == 400 and "timedCommand" in json.loads(answer)["error"]
    status, _, answer = house.api("PUT", f"/equipments/{plug}", {"timedCommand": {**VALID, "durationStepsMs": [30_000, 60_000]}})
    assert status == 200 and json.loads(answer)["timedCommand"]["durationMs"] == 30_000
    house.restart()
    reloaded = house.equipment_json(plug)
    assert reloaded["timedCommand"] == {**VALID, "durationMs": 30_000, "durationStepsMs": [30_000, 60_000]}
