"""``GET /devices/suggest?type=``: which devices fit an equipment type, and how completely."""

from __future__ import annotations

import json

import pytest

from hausbox.core.errors import BadRequest
from hausbox.devices.discovery import DataSpec, OrderSpec
from hausbox.equipments.suggest import FITS
from hausbox.equipments.types import EQUIPMENT_TYPES
from tests.inprocess import relay_order, relay_state


@pytest.fixture
def devices(house):
    d = house.device
    d("Bulb", data=[relay_state("state")], orders=[OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF", "TOGGLE"])])
    d("Dimmer", data=[relay_state("state"), DataSpec("brightness", "number", "light_brightness")],
      orders=[OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF", "TOGGLE"]), OrderSpec("brightness", "number", "set_brightness", 0, 254)])  # fmt: skip
    d("Climate sensor", data=[DataSpec("temperature", "number", "temperature"), DataSpec("humidity", "number", "humidity"), DataSpec("battery", "number", "battery")])
    d("Blind", data=[DataSpec("position", "number", "shutter_position")], orders=[OrderSpec("state", "enum", "shutter_move", enum_values=["OPEN", "CLOSE", "STOP"]), OrderSpec("position", "number", "set_shutter_position", 0, 100)])
    d("Gate contact", data=[DataSpec("contact", "boolean", "contact_door")])
    d("Gate relay", orders=[OrderSpec("trigger", "boolean")])
    d("Two-gang module", data=[relay_state("state_l1"), relay_state("state_l2")], orders=[relay_order("state_l1"), relay_order("state_l2")])
    d("Plug", data=[relay_state("state"), DataSpec("power", "number", "power", "W"), DataSpec("energy", "number", "energy", "kWh")], orders=[relay_order("state")])
    d("Clamp", data=[DataSpec("power", "number", "power", "W")])
    d("Remote", data=[DataSpec("action", "text", "action")])


def _by_name(results):
    return {r["device"]["name"]: r for r in results}


def test_every_equipment_type_has_a_fit():
    assert set(FITS) == set(EQUIPMENT_TYPES)


def test_lights(house, devices):
    onoff = _by_name(house.engine.equipments.suggest_devices("light_onoff"))
    assert onoff["Bulb"]["completeness"] == "complete" and onoff["Dimmer"]["completeness"] == "complete"
    assert onoff["Bulb"]["stateKeys"] == ["state"] and onoff["Bulb"]["commandKeys"] == ["state"]
    dimmable = _by_name(house.engine.equipments.suggest_devices("light_dimmable"))
    assert dimmable["Dimmer"]["completeness"] == "complete"
    assert dimmable["Dimmer"]["stateKeys"] == ["brightness", "state"] and dimmable["Dimmer"]["commandKeys"] == ["brightness", "state"]
    assert dimmable["Bulb"]["completeness"] == "state_only", "no set_brightness: not a complete dimmable light"
    assert "Climate sensor" not in dimmable and "Clamp" not in dimmable


def test_results_are_sorted_complete_first_then_by_name(house, devices):
    results = house.engine.equipments.suggest_devices("light_dimmable")
    ranks = {"complete": 0, "state_only": 1, "command_only": 2}
    keys = [(ranks[r["completeness"]], r["device"]["name"].lower()) for r in results]
    assert keys == sorted(keys) and results[0]["completeness"] == "complete"
    assert set(results[0]["device"]) == {"id", "name", "source"} and results[0]["device"]["source"] == "fake"


def test_sensors_meters_and_buttons(house, devices):
    sensors = _by_name(house.engine.equipments.suggest_devices("sensor"))
    assert sensors["Climate sensor"]["completeness"] == "complete"
    assert sensors["Climate sensor"]["stateKeys"] == ["battery", "humidity", "temperature"]
    assert sensors["Climate sensor"]["commandKeys"] == []
    meters = _by_name(house.engine.equipments.suggest_devices("energy_meter"))
    assert {"Clamp", "Plug"} <= set(meters) and meters["Clamp"]["completeness"] == "complete"
    assert list(_by_name(house.engine.equipments.suggest_devices("button"))) == ["Remote"]


def test_shutters(house, devices):
    (blind,) = house.engine.equipments.suggest_devices("shutter")
    assert blind["device"]["name"] == "Blind" and blind["completeness"] == "complete"
    assert blind["commandKeys"] == ["position", "state"]


def test_gate_state_and_command_halves(house, devices):
    gates = _by_name(house.engine.equipments.suggest_devices("gate"))
    assert gates["Gate contact"]["completeness"] == "state_only"
    assert gates["Gate relay"]["completeness"] == "command_only"


def test_vmc_needs_two_relays(house, devices):
    vmc = _by_name(house.engine.equipments.suggest_devices("vmc"))
    assert vmc["Two-gang module"]["completeness"] == "complete"
    assert vmc["Two-gang module"]["commandKeys"] == ["state_l1", "state_l2"]
    assert vmc["Plug"]["completeness"] == "command_only"  # one relay: low speed only
    assert "Climate sensor" not in vmc


def test_switch_lists_the_metering_keys(house, devices):
    plug = _by_name(house.engine.equipments.suggest_devices("switch"))["Plug"]
    assert plug["completeness"] == "complete" and plug["stateKeys"] == ["energy", "power", "state"]


@pytest.mark.parametrize("equipment_type", EQUIPMENT_TYPES)
def test_every_type_answers_a_list(house, devices, equipment_type):
    assert isinstance(house.engine.equipments.suggest_devices(equipment_type), list)


def test_an_unknown_type_is_a_400_naming_it(house, devices):
    with pytest.raises(BadRequest) as refused:
        house.engine.equipments.suggest_devices("teleporter")
    assert "teleporter" in refused.value.message
    status, _, body = house.api("GET", "/devices/suggest?type=teleporter")
    assert status == 400 and "teleporter" in json.loads(body)["error"]
    status, _, body = house.api("GET", "/devices/suggest")
    assert status == 400


def test_the_route(house, devices):
    status, _, body = house.api("GET", "/devices/suggest?type=light_onoff")
    assert status == 200 and {r["device"]["name"] for r in json.loads(body)} >= {"Bulb", "Dimmer"}
