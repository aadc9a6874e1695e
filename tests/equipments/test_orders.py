"""Executing equipment orders: enum resolution, refusals, dispatch failure, alarms and events."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, NotFound
from hausbox.equipments import orders as orders_module
from tests.inprocess import light_specs


@pytest.fixture
def house(make_house):
    """The plain in-process home (devices echo orders back), not this folder's silent one."""
    return make_house()


@pytest.fixture
def lamp(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    data, orders = light_specs()
    device = fake.discover("lamp", data, orders)
    equipment = engine.equipments.create("Lamp", "light_dimmable", engine.zones.root().id, device_ids=[device.id])
    return engine, fake, recorder, equipment


def test_enum_values_resolve_case_insensitively(lamp):
    engine, fake, recorder, equipment = lamp
    assert engine.orders.execute(equipment["id"], "state", "on") == {"success": True, "value": "ON"}
    assert fake.sent[-1] == ("lamp", "state", "ON")
    assert recorder.of("equipment.order.executed")[-1] | {"type": None} == {
        "type": None, "equipmentId": equipment["id"], "orderAlias": "state", "value": "ON", "source": {"kind": "manual"},
    }  # fmt: skip


def test_bad_values_unknown_aliases_and_disabled_equipments_are_refused(lamp):
    engine, fake, _, equipment = lamp
    with pytest.raises(BadRequest, match="one of ON, OFF, TOGGLE"):
        engine.orders.execute(equipment["id"], "state", "blink")
    with pytest.raises(BadRequest, match="at most 254"):
        engine.orders.execute(equipment["id"], "brightness", 300)
    with pytest.raises(BadRequest, match="a number"):
        engine.orders.execute(equipment["id"], "brightness", "bright")
    with pytest.raises(NotFound, match="Order alias not found: colour"):
        engine.orders.execute(equipment["id"], "colour", 1)
    engine.equipments.update(equipment["id"], {"enabled": False})
    with pytest.raises(BadRequest, match="disabled"):
        engine.orders.execute(equipment["id"], "state", "ON")
    assert fake.sent == []


def test_a_failed_dispatch_is_retried_once_then_alarms(lamp, monkeypatch):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0.01)
    engine, fake, recorder, equipment = lamp
    fake.fail_next = 1
    engine.orders.execute(equipment["id"], "state", "ON")
    assert fake.sent == [("lamp", "state", "ON")] and recorder.of("system.alarm.raised") == []
    fake.fail_next = 2
    with pytest.raises(orders_module.OrderFailed) as failed:
        engine.orders.execute(equipment["id"], "state", "OFF")
    assert failed.value.status == 502
    alarm = recorder.of("system.alarm.raised")[-1]
    assert alarm["alarmId"] == "order-fail:fake" and alarm["level"] == "error" and "radio jammed" in alarm["message"]
    assert recorder.of("equipment.order.failed")[-1]["error"] == "radio jammed"
    engine.orders.execute(equipment["id"], "state", "OFF")
    assert recorder.of("system.alarm.resolved")[-1]["alarmId"] == "order-fail:fake"


def test_a_disconnected_integration_answers_503_without_hanging(lamp):
    from hausbox.core.errors import ServiceUnavailable

    engine, fake, recorder, equipment = lamp
    fake.connected = False
    with pytest.raises(ServiceUnavailable):
        engine.orders.execute(equipment["id"], "state", "ON")
    assert recorder.of("equipment.order.failed")


def test_zone_orders_reach_lights_below_the_zone_only(lamp):
    engine, fake, _, equipment = lamp
    data, orders = light_specs()
    floor = engine.zones.create("Floor")
    room = engine.zones.create("Room", floor["id"])
    other = engine.zones.create("Other")
    inside = engine.equipments.create("Inside", "light_onoff", room["id"], device_ids=[fake.discover("in", data, orders).id])
    engine.equipments.create("Outside", "light_onoff", other["id"], device_ids=[fake.discover("out", data, orders).id])
    result = engine.zone_orders.execute(floor["id"], "allLightsOn", None)
    assert result == {"executed": 1, "errors": []}
    assert fake.sent == [("in", "state", "ON")]
    with pytest.raises(BadRequest, match="Invalid zone order key"):
        engine.zone_orders.execute(floor["id"], "allDance", None)
    with pytest.raises(BadRequest, match="needs a value"):
        engine.zone_orders.execute(floor["id"], "allLightsBrightness", None)
    assert inside["id"]
