"""VMC speed: the virtual ``speed`` order, break before make (spec, Equipment: Speed control)."""

from __future__ import annotations

import pytest

from hausbox.core.errors import ApiError, BadRequest, NotFound
from hausbox.devices.discovery import OrderSpec
from hausbox.equipments.vmc import plan, relay_value
from tests.inprocess import relay_order, relay_state


@pytest.fixture
def vmc(house):
    device = house.device("vmc-module", data=[relay_state("state_l1"), relay_state("state_l2")], orders=[relay_order("state_l1"), relay_order("state_l2")])
    house.fake.echo = True  # the module reports its relays as they switch
    return house.equipment(
        "VMC", "vmc",
        data={"low_state": device.data["state_l1"], "high_state": device.data["state_l2"]},
        orders={"low": device.orders["state_l1"], "high": device.orders["state_l2"]},
    )  # fmt: skip


def _relays_never_both_on(calls):
    """Replay the relay orders in the order they were sent: never both relays ON at once."""
    state = {"state_l1": "OFF", "state_l2": "OFF"}
    for _, key, value in calls:
        state[key] = value
        assert not (state["state_l1"] == "ON" and state["state_l2"] == "ON"), f"both relays energised after {key}={value}"


@pytest.mark.parametrize(
    "speed, expected",
    [
        ("v1", [("state_l2", "OFF"), ("state_l1", "ON")]),
        ("v2", [("state_l1", "OFF"), ("state_l2", "ON")]),
        ("off", [("state_l2", "OFF"), ("state_l1", "OFF")]),
        ("V2", [("state_l1", "OFF"), ("state_l2", "ON")]),
        (" Off ", [("state_l2", "OFF"), ("state_l1", "OFF")]),
    ],
)
def test_each_speed_sends_the_off_before_the_on(house, vmc, speed, expected):
    result = house.engine.orders.execute(vmc, "speed", speed)
    assert result == {"success": True, "value": speed.strip().lower()}
    assert [(key, value) for _, key, value in house.fake.sent] == expected


def test_switching_speeds_back_and_forth_never_energises_both_relays(house, vmc):
    for speed in ("v1", "v2", "v1", "off", "v2", "v2", "off", "v1"):
        house.engine.orders.execute(vmc, "speed", speed)
    _relays_never_both_on(house.fake.sent)
    assert house.engine.equipments.require(vmc).data == {"low_state": "ON", "high_state": "OFF"}


def test_each_relay_order_is_a_normal_executed_order(house, vmc):
    house.engine.orders.execute(vmc, "speed", "v2")
    executed = house.events("equipment.order.executed")
    assert [(e["orderAlias"], e["value"]) for e in executed] == [("low", "OFF"), ("high", "ON")]


@pytest.mark.parametrize("value", ["v3", "fast", "", None, 2, True, "on"])
def test_anything_else_is_refused(house, vmc, value):
    with pytest.raises(BadRequest) as refused:
        house.engine.orders.execute(vmc, "speed", value)
    assert refused.value.status == 400 and "off, v1, v2" in refused.value.message
    assert house.fake.sent == []


def test_a_failed_off_stops_before_anything_is_switched_on(house, vmc, monkeypatch):
    monkeypatch.setattr("hausbox.equipments.orders.RETRY_DELAY_S", 0.01)
    house.fake.fail_keys.add("state_l2")
    with pytest.raises(ApiError) as failed:
        house.engine.orders.execute(vmc, "speed", "v1")
    assert failed.value.status == 502
    assert all(key == "state_l2" for _, key, _ in house.fake.sent), "the ON of the low relay must not be sent"


def test_without_a_high_relay_v1_and_off_work_and_v2_is_refused(house):
    device = house.device("single", data=[relay_state("state")], orders=[relay_order("state")])
    small = house.equipment("Small VMC", "vmc", orders={"low": device.orders["state"]})
    assert house.engine.orders.execute(small, "speed", "v1")["value"] == "v1"
    assert house.engine.orders.execute(small, "speed", "off")["value"] == "off"
    with pytest.raises(BadRequest) as refused:
        house.engine.orders.execute(small, "speed", "v2")
    assert "high" in refused.value.message
    assert [(k, v) for _, k, v in house.fake.sent] == [("state", "ON"), ("state", "OFF")]


def test_without_a_low_relay_the_speed_is_refused(house):
    device = house.device("only-high", orders=[relay_order("state")])
    broken = house.equipment("Broken VMC", "vmc", orders={"high": device.orders["state"]})
    with pytest.raises(BadRequest) as refused:
        house.engine.orders.execute(broken, "speed", "v1")
    assert "low" in refused.value.message
    assert house.fake.sent == []


def test_speed_is_no_order_of_other_equipment_types(house):
    device = house.device("plug", orders=[relay_order("state")])
    plug = house.equipment("Plug", "switch", orders={"low": device.orders["state"]})
    with pytest.raises(NotFound):
        house.engine.orders.execute(plug, "speed", "v1")


def test_a_bound_speed_alias_wins_over_the_virtual_order(house):
    device = house.device("fan", orders=[OrderSpec("speed", "enum", None, enum_values=["low", "high"])])
    fan = house.equipment("Fan VMC", "vmc", orders={"speed": device.orders["speed"]})
    house.engine.orders.execute(fan, "speed", "HIGH")
    assert house.fake.sent == [("fan", "speed", "high")]


def test_the_route_answers_400_for_a_bad_speed(house, vmc):
    status, _, body = house.api("POST", f"/equipments/{vmc}/orders/speed", {"value": "turbo"})
    assert status == 400 and b"value must be one of" in body
    status, _, body = house.api("POST", f"/equipments/{vmc}/orders/speed", {"value": "V1"})
    assert status == 200 and b'"value":"v1"' in body


def test_relay_values_follow_the_order_vocabulary():
    assert relay_value(OrderSpecOrder("boolean"), True) is True
    assert relay_value(OrderSpecOrder("enum", ["on", "off"]), False) == "off"
    assert relay_value(OrderSpecOrder("number"), True) == 1
    assert relay_value(OrderSpecOrder("text"), False) == "OFF"
    for speed in ("off", "v1", "v2"):
        steps = plan(speed, True)
        on = [i for i, (_, value) in enumerate(steps) if value]
        assert all(i == len(steps) - 1 for i in on), "an ON is always the last step"


class OrderSpecOrder:
    def __init__(self, type_: str, enum_values: list | None = None):
        self.type, self.enum_values = type_, enum_values
