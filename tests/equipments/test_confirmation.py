"""Order delivery confirmation (spec, States: Order delivery confirmation; Limits: 30 s, 1 h)."""

from __future__ import annotations

import time

import gevent
import pytest

from hausbox.devices.discovery import DataSpec, OrderSpec
from hausbox.equipments.confirmation import RETRY_SOURCE, comparable, values_match
from tests.inprocess import relay_state

WAIT = 0.3  # the engine's confirmation wait in these tests (30 s in production)


@pytest.fixture
def lamp(house):
    """A light whose state is mirrored: order alias ``state``, data alias ``state``."""
    device = house.device("lamp", data=[relay_state("state"), DataSpec("brightness", "number", "light_brightness")],
                          orders=[OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF", "TOGGLE"]),
                                  OrderSpec("brightness", "number", "set_brightness", min=0, max=254)])  # fmt: skip
    house.report("lamp", state="OFF", brightness=10)
    lamp = house.equipment("Lamp", "light_dimmable", data={"state": device.data["state"], "brightness": device.data["brightness"]},
                           orders={"state": device.orders["state"], "brightness": device.orders["brightness"]})  # fmt: skip
    house.recorder.clear()
    return lamp


def test_an_order_echoed_during_the_send_is_confirmed_without_alarm(house, lamp):
    house.fake.echo = True
    house.engine.orders.execute(lamp, "state", "on")
    gevent.sleep(WAIT * 2)
    assert house.events("equipment.order.unconfirmed") == []
    assert house.events("system.alarm.raised") == []
    assert house.engine.confirmation.pending(lamp, "state") is None


def test_an_order_echoed_later_is_confirmed(house, lamp):
    house.fake.echo, house.fake.echo_delay_s = True, WAIT / 3
    house.engine.orders.execute(lamp, "state", "ON")
    assert house.engine.confirmation.pending(lamp, "state") is not None
    gevent.sleep(WAIT * 2)
    assert house.events("equipment.order.unconfirmed") == []
    assert house.engine.confirmation.pending(lamp, "state") is None


def test_no_echo_times_out_with_an_event_and_a_warning_alarm_then_a_late_state_resolves_it(house, lamp):
    started = time.monotonic()
    result = house.engine.orders.execute(lamp, "state", "ON")
    assert result["success"] is True
    assert time.monotonic() - started < WAIT / 2, "the order request never waits for the confirmation"
    gevent.sleep(WAIT / 3)
    assert house.events("equipment.order.unconfirmed") == []
    gevent.sleep(WAIT)
    (event,) = house.events("equipment.order.unconfirmed")
    assert {k: event[k] for k in ("equipmentId", "orderAlias", "value", "reason")} == {
        "equipmentId": lamp, "orderAlias": "state", "value": "ON", "reason": "timeout",
    }  # fmt: skip
    (alarm,) = house.events("system.alarm.raised")
    assert alarm["level"] == "warning" and "Lamp" in alarm["message"]
    # the device finally reports the ordered value: the alarm is resolved, nothing else happens
    house.report("lamp", state="ON")
    (resolved,) = house.events("system.alarm.resolved")
    assert resolved["alarmId"] == alarm["alarmId"]
    house.report("lamp", state="OFF")
    house.report("lamp", state="ON")
    assert len(house.events("system.alarm.resolved")) == 1
    assert house.fake.sent == [("lamp", "state", "ON")], "an online device is never re-sent the order"


def test_another_value_does_not_confirm(house, lamp):
    house.engine.orders.execute(lamp, "brightness", 200)
    house.report("lamp", brightness=120)
    gevent.sleep(WAIT * 1.5)
    (event,) = house.events("equipment.order.unconfirmed")
    assert event["orderAlias"] == "brightness" and event["value"] == 200


def test_numbers_match_within_tolerance(house, lamp):
    house.engine.orders.execute(lamp, "brightness", 128)
    house.report("lamp", brightness=127.6)
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_offline_device_gets_an_immediate_verdict_and_one_resend_when_it_returns(house, lamp):
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.orders.execute(lamp, "state", "ON")
    (event,) = house.events("equipment.order.unconfirmed")  # at once, no waiting
    assert event["reason"] == "device-offline" and event["orderAlias"] == "state"
    (alarm,) = house.events("system.alarm.raised")
    assert alarm["level"] == "warning"
    gevent.sleep(WAIT * 1.5)
    assert len(house.events("equipment.order.unconfirmed")) == 1, "no second verdict while it stays offline"

    house.fake.echo = True
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert house.fake.sent == [("lamp", "state", "ON"), ("lamp", "state", "ON")]
    executed = house.events("equipment.order.executed")
    assert executed[-1]["source"] == RETRY_SOURCE
    (resolved,) = house.events("system.alarm.resolved")
    assert resolved["alarmId"] == alarm["alarmId"]

    # it was retried once: going offline and back again sends nothing more
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert len(house.fake.sent) == 2


def test_the_resend_happens_once_even_when_unconfirmed_again(house, lamp):
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.orders.execute(lamp, "state", "ON")
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(WAIT * 1.5)
    assert len(house.fake.sent) == 2
    verdicts = house.events("equipment.order.unconfirmed")
    assert [v["reason"] for v in verdicts] == ["device-offline", "timeout"]
    assert len(house.events("system.alarm.raised")) == 1, "one alarm for the order, not one per attempt"
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert len(house.fake.sent) == 2


def test_no_resend_after_the_retry_window(house, lamp):
    house.engine.confirmation.retry_window_s = 0.05
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.orders.execute(lamp, "state", "ON")
    gevent.sleep(0.1)
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert len(house.fake.sent) == 1


def test_timeout_then_device_drop_and_return_resends(house, lamp):
    house.engine.orders.execute(lamp, "state", "ON")
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed")[0]["reason"] == "timeout"
    house.fake.echo = True
    house.engine.devices.update_status("fake", "lamp", "offline")
    house.engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert len(house.fake.sent) == 2
    assert len(house.events("system.alarm.resolved")) == 1


def test_an_order_already_in_effect_is_confirmed_at_once(house, lamp):
    house.engine.orders.execute(lamp, "state", "OFF")  # the lamp reports OFF already
    assert house.engine.confirmation.pending(lamp, "state") is None
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_non_comparable_orders_are_not_tracked(house, lamp):
    house.engine.orders.execute(lamp, "state", "TOGGLE")
    assert house.engine.confirmation.pending(lamp, "state") is None
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_an_order_without_mirror_is_not_tracked(house):
    device = house.device("bell", orders=[OrderSpec("ring", "boolean")])
    bell = house.equipment("Bell", "switch", orders={"ring": device.orders["ring"]})
    house.engine.orders.execute(bell, "ring", True)
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_a_toggle_order_is_mirrored_by_the_light_state_measure(house):
    device = house.device("bulb", data=[relay_state("state")], orders=[OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF"])])
    house.report("bulb", state="OFF")
    bulb = house.equipment("Bulb", "light_onoff", data={"light": device.data["state"]}, orders={"power": device.orders["state"]})
    house.engine.orders.execute(bulb, "power", "ON")
    entry = house.engine.confirmation.pending(bulb, "power")
    assert entry is not None and entry.mirror == "light"
    house.report("bulb", state="ON")
    assert house.engine.confirmation.pending(bulb, "power") is None
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_a_newer_order_replaces_the_pending_one(house, lamp):
    house.engine.orders.execute(lamp, "state", "ON")
    house.engine.orders.execute(lamp, "state", "OFF")  # already OFF: confirmed, nothing pending
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_a_failed_send_is_not_tracked(house, lamp, monkeypatch):
    monkeypatch.setattr("hausbox.equipments.orders.RETRY_DELAY_S", 0.01)
    house.fake.fail_keys.add("state")
    with pytest.raises(Exception):
        house.engine.orders.execute(lamp, "state", "ON")
    assert house.engine.confirmation.pending(lamp, "state") is None


def test_deleting_the_equipment_drops_its_pending_order(house, lamp):
    house.engine.orders.execute(lamp, "state", "ON")
    house.engine.equipments.delete(lamp)
    gevent.sleep(WAIT * 1.5)
    assert house.events("equipment.order.unconfirmed") == []


def test_value_comparison():
    assert values_match("ON", "on") and values_match(True, "ON") and values_match("OFF", False)
    assert values_match(21.5, "21.5") and values_match(100, 100.4) and not values_match(100, 102)
    assert not values_match("ON", "OFF") and not values_match(1, True)
    assert comparable("ON", None) and comparable(50, None) and comparable("heat", ["heat", "cool"])
    assert not comparable("CLOSE", ["OPEN", "CLOSED"]) and not comparable("TOGGLE", ["ON", "OFF"]) and not comparable(None, None)



def test_a_stale_offline_status_after_a_restart_is_no_proof(house):
    device = house.device("lamp", data=[relay_state("state")], orders=[OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF"])])
    house.report("lamp", state="OFF")
    lamp = house.equipment("Lamp", "light_onoff", data={"state": device.data["state"]}, orders={"state": device.orders["state"]})
    house.engine.devices.update_status("fake", "lamp", "offline")

    house.restart()  # the lamp is "offline" from the database
    engine, fake = house.engine, house.fake
    assert engine.devices.get(device.id).status == "offline"
    engine.orders.execute(lamp, "state", "ON")
    assert house.events("equipment.order.unconfirmed") == [], "no verdict at once on a restored status"
    gevent.sleep(WAIT * 1.5)
    (event,) = house.events("equipment.order.unconfirmed")
    assert event["reason"] == "device-offline"
    fake.echo = True
    engine.devices.update_status("fake", "lamp", "online")
    gevent.sleep(0.05)
    assert len(fake.sent) == 2 and len(house.events("system.alarm.resolved")) == 1
