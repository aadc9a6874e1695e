"""An order's value schema (devices/discovery.py ``OrderSpec.value_schema``) is kept with the order:
across a restart, and a rediscovery that brings the same one writes nothing."""

from __future__ import annotations

from hausbox.devices.discovery import OrderSpec
from tests.inprocess import FAKE_ID

COLOR = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "additionalProperties": False, "minProperties": 1}


def test_the_value_schema_survives_a_restart_and_an_unchanged_rediscovery_writes_nothing(make_house):
    house = make_house()
    house.device("bulb", orders=[OrderSpec("color", "json", "set_color", value_schema=COLOR), OrderSpec("state", "boolean")])
    house.restart()
    device = house.engine.devices.find(FAKE_ID, "bulb")
    assert device.orders["color"].value_schema == COLOR
    assert device.orders["state"].value_schema is None
    order = device.orders["color"]
    again = house.device("bulb", orders=[OrderSpec("color", "json", "set_color", value_schema=COLOR), OrderSpec("state", "boolean")])
    assert again is device and device.orders["color"] is order  # nothing rewritten
    changed = {**COLOR, "minProperties": 2}
    house.device("bulb", orders=[OrderSpec("color", "json", "set_color", value_schema=changed), OrderSpec("state", "boolean")])
    house.restart()
    assert house.engine.devices.find(FAKE_ID, "bulb").orders["color"].value_schema == changed
