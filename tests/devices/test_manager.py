"""The device manager: discovery, stable ids, the hot path's events, status, persistence."""

from __future__ import annotations

import pytest

from hausbox.devices.device import stable_id
from hausbox.devices.discovery import DataSpec
from tests.inprocess import FAKE_ID, light_specs


def test_discovery_creates_a_device_once_with_stable_ids(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    data, orders = light_specs()
    device = fake.discover("salon", data, orders, manufacturer="IKEA", model="LED1545G12", power_source="mains")
    assert device.status == "unknown"
    assert [e["device"]["id"] for e in recorder.of("device.discovered")] == [device.id]
    first_ids = {d.key: d.id for d in device.data.values()} | {f"o:{o.key}": o.id for o in device.orders.values()}
    assert first_ids["state"] == stable_id(device.id, "data", "state")
    again = fake.discover("salon", data, orders, manufacturer="IKEA", model="LED1545G12")
    assert again is device and len(recorder.of("device.discovered")) == 1
    assert {d.key: d.id for d in again.data.values()} | {f"o:{o.key}": o.id for o in again.orders.values()} == first_ids
    body = device.to_json()
    assert body["powerSource"] is None and body["manufacturer"] == "IKEA"
    assert [d["key"] for d in body["data"]] == ["brightness", "state"]


def test_a_user_rename_and_zone_survive_rediscovery(house):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    device = fake.discover("lamp", data, orders)
    zone = engine.zones.create("Kitchen")
    engine.devices.update(device.id, name="Kitchen lamp", zone_id=zone["id"])
    fake.discover("lamp", data, orders, name="lamp-renamed-by-integration")
    assert device.name == "Kitchen lamp" and device.zone_id == zone["id"]


def test_values_are_stored_at_the_declared_type_and_events_follow_changes_only(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    fake.discover("meter", [DataSpec("power", "number", "power", "W"), DataSpec("label", "text")])
    recorder.clear()
    fake.report("meter", {"power": "12.5", "label": 7})
    updates = recorder.of("device.data.updated")
    assert [(e["key"], e["value"], e["previous"]) for e in updates] == [("power", 12.5, None), ("label", "7", None)]
    assert recorder.of("device.status_changed")[0]["status"] == "online"
    recorder.clear()
    fake.report("meter", {"power": 12.5, "label": "7"})
    assert recorder.of("device.data.updated") == [] and recorder.of("device.status_changed") == []
    fake.report("meter", {"power": 13})
    assert [(e["value"], e["previous"]) for e in recorder.of("device.data.updated")] == [(13, 12.5)]


def test_a_repeated_button_press_is_news(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    fake.discover("button", [DataSpec("action", "enum", "action", enum_values=["single", "double"])])
    fake.report("button", {"action": "single"})
    fake.report("button", {"action": "single"})
    assert [e["value"] for e in recorder.of("device.data.updated")] == ["single", "single"]


def test_well_known_undeclared_keys_are_learnt_others_dropped(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    device = fake.discover("sensor", [DataSpec("temperature", "number", "temperature")])
    fake.report("sensor", {"battery": 87, "linkquality": 120, "last_seen": "2026-01-01"})
    assert "battery" in device.data and device.data["battery"].category == "battery" and device.data["battery"].unit == "%"
    assert "linkquality" not in device.data and "last_seen" not in device.data


def test_availability_changes_emit_once(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    fake.discover("plug", [DataSpec("state", "enum", "generic")])
    for status in ("online", "online", "offline", "offline", "online"):
        engine.devices.update_status(FAKE_ID, "plug", status)
    assert [e["status"] for e in recorder.of("device.status_changed")] == ["online", "offline", "online"]
    assert engine.devices.counts() == {"total": 1, "online": 1, "offline": 0, "unknown": 0}


def test_stale_devices_are_removed_but_never_on_an_empty_list(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    fake.discover("a", [DataSpec("x", "number")])
    fake.discover("b", [DataSpec("x", "number")])
    assert engine.devices.remove_stale(FAKE_ID, set()) == 0
    assert engine.devices.remove_stale(FAKE_ID, {"a"}) == 1
    assert [e["deviceName"] for e in recorder.of("device.removed")] == ["b"]
    assert engine.devices.find(FAKE_ID, "b") is None


def test_a_device_renamed_in_the_integration_keeps_its_identity(house):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    device = fake.discover("old-name", data, orders, ieee_address="0x00158d0001")
    moved = fake.discover("new-name", data, orders, ieee_address="0x00158d0001")
    assert moved.id == device.id and engine.devices.find(FAKE_ID, "new-name") is device
    assert engine.devices.find(FAKE_ID, "old-name") is None


def test_values_survive_a_restart(house):
    house.fake.discover("meter", [DataSpec("power", "number", "power")])
    house.fake.report("meter", {"power": 42})
    house.restart()
    device = house.engine.devices.find(FAKE_ID, "meter")
    assert device.data["power"].value == 42 and device.status == "online"


def test_update_needs_a_field_and_a_real_zone(house):
    from hausbox.core.errors import BadRequest

    engine, fake = house.engine, house.fake
    device = fake.discover("d", [DataSpec("x", "number")])
    with pytest.raises(BadRequest):
        engine.devices.update(device.id)
    with pytest.raises(BadRequest):
        engine.devices.update(device.id, zone_id="nowhere")


def test_the_cached_device_json_follows_every_change(house):
    import json

    engine, fake = house.engine, house.fake
    device = fake.discover("meter", [DataSpec("power", "number", "power")])
    assert json.loads(device.json_bytes())["data"][0]["value"] is None
    fake.report("meter", {"power": 5})
    assert json.loads(device.json_bytes())["data"][0]["value"] == 5
    engine.devices.update_status(FAKE_ID, "meter", "offline")
    assert json.loads(device.json_bytes())["status"] == "offline"
    engine.devices.update(device.id, name="Main meter")
    assert json.loads(device.json_bytes())["name"] == "Main meter"


def test_the_encoded_device_list_follows_changes_arrivals_and_removals(house):
    import json

    engine, fake = house.engine, house.fake
    fake.discover("b-meter", [DataSpec("power", "number", "power")])
    assert [d["name"] for d in json.loads(engine.devices.list_bytes())] == ["b-meter"]
    fake.discover("a-plug", [DataSpec("power", "number", "power")])
    assert [d["name"] for d in json.loads(engine.devices.list_bytes())] == ["a-plug", "b-meter"]
    fake.report("b-meter", {"power": 7})
    assert json.loads(engine.devices.list_bytes())[1]["data"][0]["value"] == 7
    engine.devices.delete(engine.devices.find(FAKE_ID, "a-plug").id)
    assert [d["name"] for d in json.loads(engine.devices.list_bytes())] == ["b-meter"]


def test_a_rediscovery_that_changes_nothing_writes_nothing(house, monkeypatch):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    device = fake.discover("lamp", data, orders, manufacturer="IKEA")
    stamp = device.updated_at
    writes = []
    monkeypatch.setattr(engine.devices, "_sync_data", lambda *a: writes.append(a))
    fake.discover("lamp", *light_specs(), manufacturer="IKEA")
    assert writes == [] and device.updated_at == stamp
    monkeypatch.undo()
    fake.discover("lamp", *light_specs(), manufacturer="IKEA of Sweden")
    assert device.manufacturer == "IKEA of Sweden"
