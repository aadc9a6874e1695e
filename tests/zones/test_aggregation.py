"""Zone aggregation: computed from equipments, merged up the tree, announced only on change."""

from __future__ import annotations

from hausbox.devices.discovery import DataSpec
from tests.inprocess import light_specs


def _sensor(fake, name):
    return fake.discover(name, [DataSpec("temperature", "number", "temperature"), DataSpec("humidity", "number", "humidity"), DataSpec("occupancy", "boolean", "motion")])


def test_one_message_flows_device_then_equipment_then_zone(engine):
    engine, fake, recorder = engine
    data, orders = light_specs()
    device = fake.discover("lamp", data, orders)
    room = engine.zones.create("Living room")
    engine.equipments.create("Lamp", "light_dimmable", room["id"], device_ids=[device.id])
    recorder.clear()
    fake.report("lamp", {"state": "ON"})
    chain = [t for t in recorder.types() if t in ("device.data.updated", "equipment.data.changed", "zone.data.changed")]
    assert chain[:3] == ["device.data.updated", "equipment.data.changed", "zone.data.changed"]
    zone_events = recorder.of("zone.data.changed")
    assert {e["zoneId"] for e in zone_events} == {room["id"], engine.zones.root().id}
    assert engine.aggregator.data(room["id"])["lightsOn"] == 1
    assert engine.aggregator.data(room["id"])["lightsTotal"] == 1


def test_averages_weigh_sensors_and_merge_up_the_tree(engine):
    engine, fake, recorder = engine
    floor = engine.zones.create("Floor")
    a = engine.zones.create("A", floor["id"])
    b = engine.zones.create("B", floor["id"])
    for name, zone in (("s1", a), ("s2", b), ("s3", b)):
        engine.equipments.create(name, "sensor", zone["id"], device_ids=[_sensor(fake, name).id])
    fake.report("s1", {"temperature": 18, "humidity": 40, "occupancy": False})
    fake.report("s2", {"temperature": 21, "humidity": 50, "occupancy": True})
    fake.report("s3", {"temperature": 22.5, "humidity": 60, "occupancy": False})
    floor_data = engine.aggregator.data(floor["id"])
    assert floor_data["temperature"] == round((18 + 21 + 22.5) / 3, 1)
    assert floor_data["humidity"] == 50.0
    assert floor_data["motion"] is True and floor_data["motionSensors"] == 3
    assert engine.aggregator.data(a["id"])["motion"] is False
    assert engine.aggregator.data(engine.zones.root().id)["temperature"] == floor_data["temperature"]


def test_no_event_when_the_aggregate_does_not_change(engine):
    engine, fake, recorder = engine
    room = engine.zones.create("Hall")
    engine.equipments.create("Motion", "sensor", room["id"], device_ids=[_sensor(fake, "m").id])
    fake.report("m", {"temperature": 20})
    recorder.clear()
    fake.report("m", {"humidity": 55})
    fake.report("m", {"humidity": 55})
    assert len([e for e in recorder.of("zone.data.changed") if e["zoneId"] == room["id"]]) == 1


def test_moving_an_equipment_recomputes_both_zones(engine):
    engine, fake, _ = engine
    data, orders = light_specs()
    one, two = engine.zones.create("One"), engine.zones.create("Two")
    equipment = engine.equipments.create("Lamp", "light_onoff", one["id"], device_ids=[fake.discover("l", data, orders).id])
    fake.report("l", {"state": "ON"})
    assert engine.aggregator.data(one["id"])["lightsOn"] == 1
    engine.equipments.update(equipment["id"], {"zoneId": two["id"]})
    assert engine.aggregator.data(one["id"])["lightsOn"] == 0
    assert engine.aggregator.data(two["id"])["lightsOn"] == 1


def test_submeter_power_is_summed_and_valves_counted(engine):
    engine, fake, _ = engine
    room = engine.zones.create("Utility")
    plug = fake.discover("plug", [DataSpec("power", "number", "power"), DataSpec("state", "enum", "generic")])
    main = fake.discover("main", [DataSpec("power", "number", "power")])
    valve = fake.discover("valve", [DataSpec("state", "enum", "generic"), DataSpec("flow", "number", "generic")])
    engine.equipments.create("Washer", "switch", room["id"], device_ids=[plug.id])
    engine.equipments.create("Main", "main_energy_meter", room["id"], device_ids=[main.id])
    engine.equipments.create("Garden valve", "water_valve", room["id"], device_ids=[valve.id])
    fake.report("plug", {"power": 120.5})
    fake.report("main", {"power": 3000})
    fake.report("valve", {"state": "ON", "flow": 6.25})
    data = engine.aggregator.data(room["id"])
    assert data["power"] == 120.5
    assert (data["waterValvesOpen"], data["waterValvesTotal"], data["waterFlowTotal"]) == (1, 1, 6.25)


def test_the_encoded_aggregation_follows_changes(engine):
    import json

    engine, fake, _ = engine
    data, orders = light_specs()
    room = engine.zones.create("Study")
    engine.equipments.create("Lamp", "light_onoff", room["id"], device_ids=[fake.discover("l", data, orders).id])
    assert json.loads(engine.aggregator.all_bytes())[room["id"]]["lightsOn"] == 0
    fake.report("l", {"state": "ON"})
    assert json.loads(engine.aggregator.all_bytes())[room["id"]]["lightsOn"] == 1
    other = engine.zones.create("Garage")
    assert other["id"] in json.loads(engine.aggregator.all_bytes())


def test_displays_online_follow_their_device_status(engine):
    from tests.inprocess import FAKE_ID

    engine, fake, _ = engine
    room = engine.zones.create("Kitchen")
    screen = fake.discover("screen", [DataSpec("state", "enum", "generic")])
    engine.equipments.create("Screen", "display", room["id"], device_ids=[screen.id])
    assert (engine.aggregator.data(room["id"])["displaysOnline"], engine.aggregator.data(room["id"])["displaysTotal"]) == (0, 1)
    engine.devices.update_status(FAKE_ID, "screen", "online")
    assert engine.aggregator.data(room["id"])["displaysOnline"] == 1
    engine.devices.update_status(FAKE_ID, "screen", "offline")
    assert engine.aggregator.data(room["id"])["displaysOnline"] == 0


def test_values_that_feed_no_aggregate_cause_no_recompute(engine):
    engine, fake, recorder = engine
    room = engine.zones.create("Office")
    meter = fake.discover("meter", [DataSpec("energy", "number", "energy"), DataSpec("power", "number", "power")])
    engine.equipments.create("Meter", "switch", room["id"], device_ids=[meter.id])
    recorder.clear()
    fake.report("meter", {"energy": 1.5})
    assert recorder.of("zone.data.changed") == []
    fake.report("meter", {"power": 40})
    assert [e["aggregatedData"]["power"] for e in recorder.of("zone.data.changed") if e["zoneId"] == room["id"]] == [40]
