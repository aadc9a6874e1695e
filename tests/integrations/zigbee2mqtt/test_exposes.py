"""The expose parser and the bridge/devices reader, driven by every device of the shared fixtures."""

from __future__ import annotations

from typing import Any

import pytest

from hausbox.devices.discovery import DATA_TYPES, DiscoveredDevice
from hausbox.devices.values import coerce
from hausbox.integrations.builtin.zigbee2mqtt.bridge import (
    discovered_device,
    power_source,
    present_names,
    skip_reason,
)
from hausbox.integrations.builtin.zigbee2mqtt.exposes import (
    leaves,
    parse_exposes,
    value_type,
)
from tests import zigbee

ALL_NAMES = [e["friendly_name"] for e in zigbee.bridge_devices()]
KEPT = zigbee.kept_names()


def device(name: str) -> DiscoveredDevice:
    found = discovered_device(zigbee.entry(name))
    assert found is not None, name
    return found


def data_of(found: DiscoveredDevice) -> dict[str, Any]:
    return {spec.key: spec for spec in found.data}


def orders_of(found: DiscoveredDevice) -> dict[str, Any]:
    return {spec.key: spec for spec in found.orders}


def tree_properties(exposes: list[dict[str, Any]]) -> dict[str, int]:
    """property -> access bits of the properties that are state keys (composites whole)."""
    found: dict[str, int] = {}

    def walk(items: list[dict[str, Any]]) -> None:
        for expose in items:
            if "property" in expose and (expose["type"] in ("composite", "list") or "features" not in expose):
                found[expose["property"]] = found.get(expose["property"], 0) | expose.get("access", 1)
            elif "features" in expose:
                walk(expose["features"])

    walk(exposes)
    return found


# ---- every device of the fixtures ----------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_fixture_device_is_read_or_skipped(name):
    entry = zigbee.entry(name)
    found = discovered_device(entry)
    if name in zigbee.SKIPPED:
        assert found is None and skip_reason(entry)
        return
    assert found is not None and skip_reason(entry) is None
    definition = entry["definition"]
    assert found.source_device_id == name
    assert found.manufacturer == definition["vendor"] and found.model == definition["model"]
    assert found.ieee_address == entry["ieee_address"]
    assert found.power_source in ("mains", "battery")
    assert found.raw_expose == definition["exposes"]
    expected = tree_properties(definition["exposes"])
    data, orders = data_of(found), orders_of(found)
    assert len(data) == len(found.data) and len(orders) == len(found.orders), "keys are unique"
    assert set(data) == {p for p, access in expected.items() if access & 1}
    assert set(orders) == {p for p, access in expected.items() if access & 2}
    for spec in [*found.data, *found.orders]:
        assert spec.type in DATA_TYPES
        if spec.type == "enum":
            assert spec.enum_values, spec
        elif spec.type != "number":  # a number order lists its presets (test_order_values.py)
            assert spec.enum_values is None, spec
    for spec in found.data:
        assert spec.category, spec


@pytest.mark.parametrize("name", [n for n in zigbee.states()["devices"] if n in KEPT])
def test_every_state_key_is_declared_and_keeps_its_declared_type(name):
    data = data_of(device(name))
    for message in zigbee.states()["devices"][name]["payloads"]:
        for key, raw in message["payload"].items():
            assert key in data, f"{name}: {key} not declared"
            spec = data[key]
            value = coerce(spec.type, raw)
            expected_type = {"boolean": bool, "number": (int, float), "enum": str, "text": str, "json": (dict, list)}[spec.type]
            assert isinstance(value, expected_type), (name, key, raw, spec.type)
            if spec.type == "enum":
                assert value in spec.enum_values, (name, key, value, spec.enum_values)
        for key in message.get("extra_keys", {}):
            assert key not in data, f"{name}: extra key {key} must not be declared"


@pytest.mark.parametrize("name", [n for n in zigbee.orders()["devices"] if n in KEPT])
def test_every_valid_order_property_is_a_declared_order(name):
    orders = orders_of(device(name))
    for order in zigbee.orders()["devices"][name]["valid"]:
        for key, value in order["payload"].items():
            assert key in orders, f"{name}: {key} not an order"
            spec = orders[key]
            if spec.type == "json":
                assert isinstance(value, (dict, list)), (name, key)
            if spec.type == "enum":
                assert value in spec.enum_values, (name, key, value)


def test_skipped_entries_and_the_names_still_present():
    entries = zigbee.bridge_devices()
    assert {e["friendly_name"] for e in entries if discovered_device(e) is None} == zigbee.SKIPPED
    reasons = {e["friendly_name"]: skip_reason(e) for e in entries}
    assert reasons["Coordinator"] == "coordinator"
    assert reasons["garage_prise_inconnue"] is None  # unsupported natively, driven by its generated definition
    assert reasons["grenier_repeteur"] == "disabled"
    assert reasons["0x842e14fffe5b6c7d"] == "not supported (yet)"
    # A disabled device still exists in the bridge: it keeps its bindings (not stale).
    assert present_names(entries) == {e["friendly_name"] for e in entries} - {"Coordinator"}


# ---- representative devices ----------------------------------------------------------------------
def test_ikea_colour_bulb():
    found = device("chambre_lampe_chevet")
    data, orders = data_of(found), orders_of(found)
    state = data["state"]
    assert (state.type, state.category, state.enum_values) == ("enum", "light_state", ["ON", "OFF"])
    assert (orders["state"].type, orders["state"].category, orders["state"].enum_values) == ("enum", "light_toggle", ["ON", "OFF", "TOGGLE"])
    assert (data["brightness"].type, data["brightness"].category) == ("number", "light_brightness")
    assert (orders["brightness"].category, orders["brightness"].min, orders["brightness"].max) == ("set_brightness", 0, 254)
    assert (data["color_temp"].category, data["color_temp"].unit) == ("light_color_temp", "mired")
    assert (orders["color_temp"].category, orders["color_temp"].min, orders["color_temp"].max, orders["color_temp"].unit) == ("set_color_temp", 153, 500, "mired")
    # The colour composite is one object, as the state carries it; its x / y are not keys of their own.
    assert (data["color"].type, data["color"].category) == ("json", "light_color")
    assert (orders["color"].type, orders["color"].category) == ("json", "set_color")
    assert "x" not in data and "y" not in data
    assert data["level_config"].type == "json" and orders["level_config"].type == "json"
    # Set-only exposes are orders and never data.
    assert "effect" in orders and "effect" not in data
    assert orders["identify"].enum_values == ["identify"] and "identify" not in data
    assert data["power_on_behavior"].enum_values == ["off", "on", "toggle", "previous"]
    assert (data["linkquality"].type, data["linkquality"].unit) == ("number", "lqi")
    assert (found.power_source, found.manufacturer, found.model) == ("mains", "IKEA", "LED1624G9")


def test_hue_bulb_declares_colour_once_from_its_two_composites():
    found = device("salon_lampadaire")
    assert [spec.key for spec in found.data].count("color") == 1
    assert [spec.key for spec in found.orders].count("color") == 1
    assert data_of(found)["color"].type == "json"


def test_aqara_motion_sensor():
    found = device("couloir_mouvement")
    data = data_of(found)
    assert found.orders == []
    assert (data["occupancy"].type, data["occupancy"].category) == ("boolean", "motion")
    assert (data["battery"].type, data["battery"].category, data["battery"].unit) == ("number", "battery", "%")
    assert (data["illuminance"].category, data["device_temperature"].category, data["voltage"].category) == ("luminosity", "temperature", "voltage")
    assert data["power_outage_count"].category == "generic"
    assert (found.power_source, found.manufacturer, found.model, found.ieee_address) == ("battery", "Aqara", "RTCGQ11LM", "0x00158d0003f7a21b")


def test_contact_sensor_with_inverted_booleans_stays_boolean():
    data = data_of(device("entree_porte"))
    assert (data["contact"].type, data["contact"].category) == ("boolean", "contact_door")


def test_two_channel_relay_keeps_endpoint_suffixed_keys():
    found = device("garage_relais")
    data, orders = data_of(found), orders_of(found)
    for channel in ("l1", "l2"):
        key = f"state_{channel}"
        assert (data[key].type, data[key].category, data[key].enum_values) == ("enum", "light_state", ["ON", "OFF"])
        assert (orders[key].category, orders[key].enum_values) == ("toggle_power", ["ON", "OFF", "TOGGLE"])
        assert (orders[f"countdown_{channel}"].min, orders[f"countdown_{channel}"].max, orders[f"countdown_{channel}"].unit) == (0, 43200, "s")
        assert data[f"power_on_behavior_{channel}"].enum_values == ["off", "previous", "on"]
    assert "state" not in data and "countdown" not in data
    # A set-only composite: one json order, no data, none of its features as keys.
    assert orders["inching_control_set"].type == "json" and "inching_control_set" not in data
    assert "inching_control_1" not in orders
    assert (data["backlight_mode"].type, data["backlight_mode"].enum_values) == ("enum", ["ON", "OFF"])


def test_ikea_cover():
    found = device("chambre_store")
    data, orders = data_of(found), orders_of(found)
    assert (data["state"].type, data["state"].enum_values) == ("enum", ["OPEN", "CLOSE", "STOP"])
    assert data["state"].category == "generic"
    assert (orders["state"].category, orders["state"].enum_values) == ("shutter_move", ["OPEN", "CLOSE", "STOP"])
    assert (data["position"].category, data["position"].unit) == ("shutter_position", "%")
    assert (orders["position"].category, orders["position"].min, orders["position"].max) == ("set_shutter_position", 0, 100)
    assert data["battery"].category == "battery" and "battery" not in orders
    assert found.power_source == "battery"


def test_danfoss_thermostat():
    found = device("salon_radiateur")
    data, orders = data_of(found), orders_of(found)
    assert (data["local_temperature"].category, data["local_temperature"].unit) == ("temperature", "°C")
    assert data["occupied_heating_setpoint"].category == "setpoint"
    setpoint = orders["occupied_heating_setpoint"]
    assert (setpoint.type, setpoint.category, setpoint.min, setpoint.max, setpoint.unit) == ("number", "set_setpoint", 5, 35, "°C")
    assert (orders["system_mode"].type, orders["system_mode"].enum_values) == ("enum", ["heat"])
    assert (data["running_state"].enum_values, "running_state" in orders) == (["idle", "heat"], False)
    # A binary with text values is an enum of [value_on, value_off]; a true/false one stays boolean.
    assert (data["thermostat_orientation"].type, data["thermostat_orientation"].enum_values) == ("enum", ["vertical", "horizontal"])
    assert data["mounted_mode_active"].type == "boolean" and orders["mounted_mode_control"].type == "boolean"
    assert data["system_status_code"].type == "text"
    assert orders["regulation_setpoint_offset"].min == -2.5


def test_yale_lock():
    found = device("entree_serrure")
    data, orders = data_of(found), orders_of(found)
    assert (data["state"].type, data["state"].category, data["state"].enum_values) == ("enum", "generic", ["LOCK", "UNLOCK"])
    assert (orders["state"].category, orders["state"].enum_values) == (None, ["LOCK", "UNLOCK"])
    assert (data["lock_state"].category, data["lock_state"].enum_values) == ("lock_state", ["not_fully_locked", "locked", "unlocked"])
    assert "lock_state" not in orders
    assert data["pin_code"].type == "json" and orders["pin_code"].type == "json"
    assert (data["action"].category, "unlock" in data["action"].enum_values) == ("action", True)
    assert data["battery_low"].category == "battery"


def test_siren_warning_is_a_set_only_composite():
    found = device("entree_sirene")
    data, orders = data_of(found), orders_of(found)
    assert "warning" not in data
    assert (orders["warning"].type, orders["warning"].category, orders["warning"].enum_values) == ("json", None, None)
    assert not {"strobe", "mode", "duration"} & (set(data) | set(orders))
    assert (orders["max_duration"].min, orders["max_duration"].max) == (0, 65534)


def test_plain_state_of_a_device_that_is_not_a_light():
    found = device("jardin/vanne")
    data, orders = data_of(found), orders_of(found)
    assert (data["state"].type, data["state"].category) == ("enum", "generic")
    assert orders["state"].category is None and orders["state"].enum_values == ["ON", "OFF"]


def test_plugs_are_switches():
    orders = orders_of(device("salon_prise_tv"))
    assert orders["state"].category == "toggle_power"
    data = data_of(device("cuisine_prise_four"))
    assert (data["power"].category, data["energy"].category, data["current"].category) == ("power", "energy", "current")
    assert (data["child_lock"].category, data["child_lock"].enum_values) == ("lock_state", ["LOCK", "UNLOCK"])


# ---- the flattening rules on their own ---------------------------------------------------------
def test_flattening_rules_on_a_made_up_tree():
    exposes = [
        {"type": "light", "features": [{"type": "binary", "property": "state", "name": "state", "value_on": "ON", "value_off": "OFF", "access": 7}]},
        {"type": "numeric", "property": "no_access"},
        {"type": "composite", "property": "cfg", "features": [{"type": "numeric", "property": "a", "access": 2}, {"type": "numeric", "property": "b", "access": 1}]},
        {"type": "composite", "features": [{"type": "numeric", "property": "inner", "access": 3}]},
        {"type": "list", "property": "schedule", "access": 3, "item_type": {"type": "numeric", "name": "t"}},
        {"type": "strange", "property": "odd", "access": 1},
        {"type": "numeric", "features": "not-a-list", "property": "weird", "access": 1},
        "not an expose",
        {"type": "binary", "property": "flag", "value_on": True, "value_off": False, "access": 1},
        {"type": "binary", "property": "mode", "value_on": 1, "value_off": 0, "access": 3},
    ]
    data, orders = parse_exposes(exposes)
    by_key = {s.key: s for s in data}
    assert [s.key for s in data] == ["state", "no_access", "cfg", "inner", "schedule", "odd", "weird", "flag", "mode"]
    assert [s.key for s in orders] == ["state", "cfg", "inner", "schedule", "mode"]
    assert by_key["no_access"].type == "number"  # access defaults to published
    assert by_key["cfg"].type == "json"  # a composite's access comes from its features when it has none
    assert by_key["schedule"].type == "json" and by_key["odd"].type == "text"
    assert by_key["flag"].type == "boolean"
    assert (by_key["mode"].type, by_key["mode"].enum_values) == ("enum", [1, 0])
    assert by_key["state"].category == "light_state"
    assert [leaf.parent for leaf in leaves(exposes)][:1] == ["light"]
    assert value_type({"type": "binary", "value_on": "OPEN", "value_off": "CLOSED"}) == "enum"
    assert parse_exposes(None) == ([], [])


def test_a_state_without_group_is_a_light_state_when_the_device_dims():
    exposes = [
        {"type": "binary", "property": "state", "value_on": "ON", "value_off": "OFF", "access": 3},
        {"type": "numeric", "property": "brightness", "access": 3, "value_min": 0, "value_max": 100},
    ]
    data, orders = parse_exposes(exposes)
    assert data[0].category == "light_state" and orders[0].category == "light_toggle"
    data, orders = parse_exposes(exposes[:1])
    assert data[0].category == "generic" and orders[0].category is None


def test_power_source_and_identity_fallbacks():
    assert power_source("Mains (single phase)") == "mains"
    assert power_source("Mains (3 phase)") == "mains"
    assert power_source("Battery") == "battery"
    assert power_source("DC Source") == "dc"
    assert power_source("Unknown") is None and power_source(None) is None
    entry = zigbee.entry("couloir_variateur")
    entry["definition"].pop("vendor")
    entry["definition"].pop("model")
    entry["manufacturer"], entry["model_id"] = "Legrand", " Dimmer switch w/o neutral\x00\x00\x00"
    found = discovered_device(entry)
    assert (found.manufacturer, found.model) == ("Legrand", "Dimmer switch w/o neutral")
    assert discovered_device({"friendly_name": "x", "type": "Router", "supported": True}) is None
    assert discovered_device("garbage") is None
