"""Equipments: creation rules, auto-bindings, alias conflicts, the data map keyed by alias."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.devices.discovery import DataSpec
from tests.inprocess import light_specs


@pytest.fixture
def house(make_house):
    """The plain in-process home (devices echo orders back), not this folder's silent one."""
    return make_house()


def test_device_ids_bind_every_datum_and_order_by_key(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    data, orders = light_specs()
    lamp = fake.discover("lamp", data, orders)
    fake.report("lamp", {"state": "OFF", "brightness": 100})
    body = engine.equipments.create("Lamp", "light_dimmable", engine.zones.root().id, device_ids=[lamp.id])
    assert {b["alias"] for b in body["dataBindings"]} == {"state", "brightness"}
    assert {b["alias"] for b in body["orderBindings"]} == {"state", "brightness"}
    assert body["data"] == {"state": "OFF", "brightness": 100}
    state = next(b for b in body["dataBindings"] if b["alias"] == "state")
    assert state["category"] == "light_state" and state["enumValues"] == ["ON", "OFF"] and state["deviceName"] == "lamp"
    assert recorder.of("equipment.created")[0]["equipment"]["id"] == body["id"]


def test_unknown_type_zone_or_device_is_refused(house):
    engine, fake = house.engine, house.fake
    root = engine.zones.root().id
    with pytest.raises(BadRequest, match="Invalid equipment type: toaster"):
        engine.equipments.create("T", "toaster", root)
    with pytest.raises(NotFound):
        engine.equipments.create("T", "switch", "nowhere")
    with pytest.raises(BadRequest):
        engine.equipments.create("T", "switch", root, device_ids=["ghost"])
    engine.equipments.create("Main", "main_energy_meter", root)
    with pytest.raises(Conflict):
        engine.equipments.create("Main 2", "main_energy_meter", root)


def test_alias_conflicts_answer_409_and_bindings_can_be_removed(house):
    engine, fake = house.engine, house.fake
    sensor = fake.discover("s", [DataSpec("temperature", "number", "temperature"), DataSpec("humidity", "number", "humidity")])
    equipment = engine.equipments.create("Sensor", "sensor", engine.zones.root().id)
    binding = engine.equipments.add_data_binding(equipment["id"], sensor.data["temperature"].id, "temperature")
    with pytest.raises(Conflict, match='Alias "temperature" already exists'):
        engine.equipments.add_data_binding(equipment["id"], sensor.data["humidity"].id, "temperature")
    fake.report("s", {"temperature": 19.5})
    assert engine.equipments.to_json(engine.equipments.get(equipment["id"]))["data"] == {"temperature": 19.5}
    engine.equipments.remove_data_binding(equipment["id"], binding["id"])
    fake.report("s", {"temperature": 20})
    assert engine.equipments.to_json(engine.equipments.get(equipment["id"]))["data"] == {}
    with pytest.raises(NotFound):
        engine.equipments.remove_data_binding(equipment["id"], binding["id"])


def test_bindings_go_when_their_device_goes(house):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    lamp = fake.discover("lamp", data, orders)
    body = engine.equipments.create("Lamp", "light_dimmable", engine.zones.root().id, device_ids=[lamp.id])
    engine.devices.delete(lamp.id)
    after = engine.equipments.to_json(engine.equipments.get(body["id"]))
    assert after["dataBindings"] == [] and after["orderBindings"] == [] and after["data"] == {}


def test_separate_supply_is_refused_on_whole_supply_meters(house):
    engine = house.engine
    main = engine.equipments.create("Main", "main_energy_meter", engine.zones.root().id)
    with pytest.raises(BadRequest, match="separateSupply"):
        engine.equipments.update(main["id"], {"separateSupply": True})
    plug = engine.equipments.create("Heater", "switch", engine.zones.root().id)
    assert engine.equipments.update(plug["id"], {"separateSupply": True, "requireConfirmation": True})["separateSupply"] is True


def test_equipments_survive_a_restart(house):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    lamp = fake.discover("lamp", data, orders)
    fake.report("lamp", {"state": "ON"})
    body = engine.equipments.create("Lamp", "light_dimmable", engine.zones.root().id, device_ids=[lamp.id])
    house.restart()
    again = house.engine
    restored = again.equipments.to_json(again.equipments.get(body["id"]))
    assert restored["data"]["state"] == "ON" and len(restored["orderBindings"]) == 2


def test_the_cached_list_json_follows_every_change(house):
    import json

    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    lamp = fake.discover("lamp", data, orders)
    body = engine.equipments.create("Lamp", "light_dimmable", engine.zones.root().id, device_ids=[lamp.id])
    equipment = engine.equipments.get(body["id"])

    def listed():
        return json.loads(engine.equipments.json_bytes(equipment))

    assert listed()["data"] == {"state": None, "brightness": None}
    fake.report("lamp", {"state": "ON"})
    assert listed()["data"]["state"] == "ON"
    fake.report("lamp", {"brightness": 10})  # a value that no binding of the same alias had before
    assert listed()["data"]["brightness"] == 10
    engine.equipments.update(body["id"], {"name": "Desk lamp"})
    assert listed()["name"] == "Desk lamp"
    engine.devices.update(lamp.id, name="Renamed device")
    assert {b["deviceName"] for b in listed()["dataBindings"]} == {"Renamed device"}
    assert listed() == json.loads(json.dumps(engine.equipments.to_json(equipment)))


def test_the_encoded_list_follows_changes_and_filters(house):
    import json

    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    lamp = fake.discover("lamp", data, orders)
    root = engine.zones.root().id
    light = engine.equipments.create("Lamp", "light_dimmable", root, device_ids=[lamp.id])
    assert [e["name"] for e in json.loads(engine.equipments.list_bytes())] == ["Lamp"]
    engine.equipments.create("Fan", "switch", root)
    assert [e["name"] for e in json.loads(engine.equipments.list_bytes())] == ["Fan", "Lamp"]
    assert [e["name"] for e in json.loads(engine.equipments.list_bytes("switch"))] == ["Fan"]
    fake.report("lamp", {"state": "ON"})
    assert json.loads(engine.equipments.list_bytes())[1]["data"]["state"] == "ON"
    engine.equipments.delete(light["id"])
    assert [e["name"] for e in json.loads(engine.equipments.list_bytes())] == ["Fan"]
