"""A device's reading or an order's value the engine could not store and encode back is refused at the
door (issue 10): the reading is not kept and the listings stay whole; the order is a 400."""

from __future__ import annotations

import json

import pytest

from hausbox.core.errors import BadRequest
from hausbox.devices.discovery import DataSpec, OrderSpec

UNSTORABLE = [1 << 64, -(1 << 70), "\ud800", float("nan"), float("inf"), {"a": "\udfff"}]


def deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.fixture
def probe(house):
    data = [DataSpec("level", "number", "generic"), DataSpec("label", "text", "generic"), DataSpec("color", "json", "generic")]
    device = house.device("probe", data, [OrderSpec("level", "number", "generic")])
    equipment_id = house.equipment("Probe", "sensor", [device])
    house.report("probe", level=7, label="ok", color={"x": 1})
    return house, device, equipment_id


@pytest.mark.parametrize("value", [*UNSTORABLE, deep(300)], ids=lambda value: repr(value)[:24])
def test_a_reading_that_cannot_be_encoded_is_not_kept(probe, value):
    house, device, _ = probe
    house.recorder.clear()
    house.report("probe", level=value)
    house.report("probe", color=value)
    house.report("probe", level="1e400")  # a number datum reads it as infinity
    house.report("probe", label="still here")
    assert {d.key: d.value for d in device.data.values()} == {"level": 7, "label": "still here", "color": {"x": 1}}
    assert [e["value"] for e in house.recorder.of("device.data.updated")] == ["still here"]
    for path in ("/devices", "/equipments", f"/devices/{device.id}"):
        status, _, body = house.api("GET", path)
        assert status == 200, body[:300]
        json.loads(body)


def test_an_order_value_given_as_text_beyond_64_bits_is_refused(probe):
    house, _, equipment_id = probe
    for value in ("9" * 30, "-" + "9" * 30):
        with pytest.raises(BadRequest, match="value must be a number"):
            house.engine.orders.execute(equipment_id, "level", value)
    assert house.fake.sent == []
