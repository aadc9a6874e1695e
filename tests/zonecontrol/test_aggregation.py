"""Zone aggregation: computed from equipments, merged up the tree, announced only on change."""

from __future__ import annotations

import json
import random

import pytest

from hausbox.devices.discovery import DataSpec
from tests.inprocess import light_specs


def _sensor(fake, name):
    return fake.discover(name, [DataSpec("temperature", "number", "temperature"), DataSpec("humidity", "number", "humidity"), DataSpec("occupancy", "boolean", "motion")])


def test_one_message_flows_device_then_equipment_then_zone(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
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


def test_averages_weigh_sensors_and_merge_up_the_tree(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
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


def test_no_event_when_the_aggregate_does_not_change(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    room = engine.zones.create("Hall")
    engine.equipments.create("Motion", "sensor", room["id"], device_ids=[_sensor(fake, "m").id])
    fake.report("m", {"temperature": 20})
    recorder.clear()
    fake.report("m", {"humidity": 55})
    fake.report("m", {"humidity": 55})
    assert len([e for e in recorder.of("zone.data.changed") if e["zoneId"] == room["id"]]) == 1


def test_moving_an_equipment_recomputes_both_zones(house):
    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    one, two = engine.zones.create("One"), engine.zones.create("Two")
    equipment = engine.equipments.create("Lamp", "light_onoff", one["id"], device_ids=[fake.discover("l", data, orders).id])
    fake.report("l", {"state": "ON"})
    assert engine.aggregator.data(one["id"])["lightsOn"] == 1
    engine.equipments.update(equipment["id"], {"zoneId": two["id"]})
    assert engine.aggregator.data(one["id"])["lightsOn"] == 0
    assert engine.aggregator.data(two["id"])["lightsOn"] == 1


def test_submeter_power_is_summed_and_valves_counted(house):
    engine, fake = house.engine, house.fake
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


def test_the_encoded_aggregation_follows_changes(house):
    import json

    engine, fake = house.engine, house.fake
    data, orders = light_specs()
    room = engine.zones.create("Study")
    engine.equipments.create("Lamp", "light_onoff", room["id"], device_ids=[fake.discover("l", data, orders).id])
    assert json.loads(engine.aggregator.all_bytes())[room["id"]]["lightsOn"] == 0
    fake.report("l", {"state": "ON"})
    assert json.loads(engine.aggregator.all_bytes())[room["id"]]["lightsOn"] == 1
    other = engine.zones.create("Garage")
    assert other["id"] in json.loads(engine.aggregator.all_bytes())


def test_displays_online_follow_their_device_status(house):
    from tests.inprocess import FAKE_ID

    engine, fake = house.engine, house.fake
    room = engine.zones.create("Kitchen")
    screen = fake.discover("screen", [DataSpec("state", "enum", "generic")])
    engine.equipments.create("Screen", "display", room["id"], device_ids=[screen.id])
    assert (engine.aggregator.data(room["id"])["displaysOnline"], engine.aggregator.data(room["id"])["displaysTotal"]) == (0, 1)
    engine.devices.update_status(FAKE_ID, "screen", "online")
    assert engine.aggregator.data(room["id"])["displaysOnline"] == 1
    engine.devices.update_status(FAKE_ID, "screen", "offline")
    assert engine.aggregator.data(room["id"])["displaysOnline"] == 0


def test_values_that_feed_no_aggregate_cause_no_recompute(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    room = engine.zones.create("Office")
    meter = fake.discover("meter", [DataSpec("energy", "number", "energy"), DataSpec("power", "number", "power")])
    engine.equipments.create("Meter", "switch", room["id"], device_ids=[meter.id])
    recorder.clear()
    fake.report("meter", {"energy": 1.5})
    assert recorder.of("zone.data.changed") == []
    fake.report("meter", {"power": 40})
    assert [e["aggregatedData"]["power"] for e in recorder.of("zone.data.changed") if e["zoneId"] == room["id"]] == [40]


# ---- incremental aggregation ----------------------------------------------------------------------
def test_moving_an_equipment_announces_each_zone_once_with_its_final_data(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    data, orders = light_specs()
    floor = engine.zones.create("Floor")
    one, two = engine.zones.create("One", floor["id"]), engine.zones.create("Two", floor["id"])
    lamp = engine.equipments.create("Lamp", "light_onoff", one["id"], device_ids=[fake.discover("l", data, orders).id])
    fake.report("l", {"state": "ON"})
    recorder.clear()
    engine.equipments.update(lamp["id"], {"zoneId": two["id"]})
    events = recorder.of("zone.data.changed")
    # The floor and the root keep one light on: no event, not even a passing one.
    assert [(e["zoneId"], e["aggregatedData"]["lightsOn"]) for e in events] == [(one["id"], 0), (two["id"], 1)]


def test_sums_come_back_to_exactly_zero(house):
    engine, fake = house.engine, house.fake
    room = engine.zones.create("Workshop")
    for n in range(3):
        engine.equipments.create(f"Plug {n}", "switch", room["id"], device_ids=[fake.discover(f"p{n}", [DataSpec("power", "number", "power")]).id])
        engine.equipments.create(f"Probe {n}", "sensor", room["id"], device_ids=[fake.discover(f"t{n}", [DataSpec("temperature", "number", "temperature")]).id])
    for step in range(300):  # values that float sums cannot hold exactly
        fake.report(f"p{step % 3}", {"power": (0.1, 0.2, 0.3, 1e-9, 123456.7)[step % 5]})
        fake.report(f"t{step % 3}", {"temperature": (-0.05, 0.05, 0.15, -0.15, 21.25)[step % 5]})
        assert engine.aggregator.all_json() == _from_scratch(engine, since=True)
    for n, watts in enumerate((0.3, 0.6, 0, 0.0, 0)):  # 0.3 + 0.6 - 0.3 - 0.6 is -1.1e-16 in floats
        fake.report(f"p{n % 3}", {"power": watts})
    for n in range(3):
        fake.report(f"t{n}", {"temperature": 21.25})
    data = engine.aggregator.data(room["id"])
    assert repr(data["power"]) == "0.0"  # not -0.0
    assert data["temperature"] == 21.2  # 21.25 is exact in binary: round() goes to even


def test_a_key_dropped_at_rediscovery_stops_counting_at_the_next_rebase(house, monkeypatch):
    from hausbox.zonecontrol import aggregation

    engine, fake, recorder = house.engine, house.fake, house.recorder
    room = engine.zones.create("Attic")
    for name in ("s1", "s2"):
        engine.equipments.create(name, "sensor", room["id"], device_ids=[_sensor(fake, name).id])
    fake.report("s1", {"temperature": 20})
    fake.report("s2", {"temperature": 22})
    fake.discover("s2", [DataSpec("humidity", "number", "humidity")])  # no temperature any more: unbound, silently
    assert engine.aggregator.data(room["id"])["temperature"] == 21.0  # not seen yet: nothing announced it
    later = aggregation.now_ms() + aggregation.REBASE_MS
    monkeypatch.setattr(aggregation, "now_ms", lambda: later)
    recorder.clear()
    fake.report("s1", {"humidity": 50})
    assert engine.aggregator.data(room["id"])["temperature"] == 20.0
    assert [e["aggregatedData"]["temperature"] for e in recorder.of("zone.data.changed") if e["zoneId"] == room["id"]] == [20.0]


def _from_scratch(engine, since: bool = False) -> dict:
    """Every zone's data computed from scratch by a fresh aggregator (motionSince aside, or as null)."""
    from hausbox.core.bus import EventBus
    from hausbox.zonecontrol.aggregation import ZoneAggregator

    fresh = ZoneAggregator(EventBus(), engine.zones, engine.equipments, engine.equipments.is_online, root_extras=engine.aggregator.root_extras)
    return {zone_id: data if since else _without_since(data) for zone_id, data in fresh.all_json().items()}


def _without_since(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "motionSince"}


_KINDS = {
    "climate": [
        DataSpec("temperature", "number", "temperature"), DataSpec("humidity", "number", "humidity"),
        DataSpec("illuminance", "number", "luminosity"), DataSpec("occupancy", "boolean", "motion"),
        DataSpec("device_temperature", "number", "temperature"), DataSpec("battery", "number", "battery"),
    ],
    "alarms": [
        DataSpec("contact", "boolean", "contact_door"), DataSpec("window", "boolean", "contact_window"),
        DataSpec("water_leak", "boolean", "water_leak"), DataSpec("smoke", "boolean", "smoke"),
    ],
    "light": [DataSpec("state", "enum", "light_state", enum_values=["ON", "OFF"]), DataSpec("brightness", "number", "light_brightness"), DataSpec("power", "number", "power")],
    "shutter": [DataSpec("position", "number", "shutter_position")],
    "valve": [DataSpec("state", "enum", "generic", enum_values=["ON", "OFF"]), DataSpec("flow", "number", "generic")],
    "meter": [DataSpec("power", "number", "power"), DataSpec("energy", "number", "energy")],
}  # fmt: skip
_TYPES = (
    "sensor", "light_onoff", "light_dimmable", "switch", "shutter", "water_valve", "display", "weather",
    "main_energy_meter", "solar_panel", "heater",
)  # fmt: skip
_NUMBERS = (21.1, 21.2, 21.15, 21.25, 0.1, 0.2, 0.3, -0.05, 0, 100, 1e-20, 1e17, 1e300, "NaN", "inf", "n/a", None)


def _value(rng, spec):
    if spec.type == "number":
        return rng.choice(_NUMBERS) if rng.random() < 0.3 else round(rng.uniform(-10, 60), rng.choice((0, 1, 2)))
    if spec.type == "boolean":
        return rng.choice((True, False, "on", "off", None))
    return rng.choice(("ON", "OFF", "on", "TOGGLE", None))


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_data_and_events_match_a_from_scratch_computation(house, seed):
    """Thousands of random changes; after each, every zone's data equals a from-scratch computation,
    and zone.data.changed was emitted once for exactly the zones whose data changed."""
    from hausbox.core.clock import iso_utc, now_ms
    from hausbox.core.errors import ApiError
    from tests.inprocess import FAKE_ID

    engine, fake = house.engine, house.fake
    rng = random.Random(seed)
    root = engine.zones.root().id
    floors = [engine.zones.create(f"Floor {f}")["id"] for f in range(2)]
    for f in range(2):
        for r in range(3):
            engine.zones.create(f"Room {f}.{r}", floors[f])
    devices: dict[str, tuple[str, str]] = {}  # source id -> (device id, kind)

    def discover(source: str, kind: str) -> None:
        devices[source] = (fake.discover(source, _KINDS[kind]).id, kind)

    for n in range(14):
        discover(f"d{n}", rng.choice(list(_KINDS)))

    def zones() -> list[str]:
        return [z.id for z in engine.zones.all()]

    def equipments() -> list[str]:
        return [e.id for e in engine.equipments.all()]

    def create_equipment() -> None:
        picked = rng.sample(sorted(devices), rng.choice((0, 1, 1, 2)))
        engine.equipments.create(f"e{rng.randrange(10**6)}", rng.choice(_TYPES), rng.choice(zones()), device_ids=[devices[s][0] for s in picked])

    for _ in range(18):
        try:
            create_equipment()
        except ApiError:
            pass  # a second main meter

    def report() -> None:
        source = rng.choice(sorted(devices))
        specs = _KINDS[devices[source][1]]
        fake.report(source, {spec.key: _value(rng, spec) for spec in rng.sample(specs, rng.randint(1, len(specs)))})

    def move() -> None:
        engine.equipments.update(rng.choice(equipments()), {"zoneId": rng.choice(zones())})

    def toggle_enabled() -> None:
        equipment = engine.equipments.get(rng.choice(equipments()))
        engine.equipments.update(equipment.id, {"enabled": not equipment.enabled})

    def change_type() -> None:
        engine.equipments.update(rng.choice(equipments()), {"type": rng.choice(_TYPES)})

    def toggle_separate_supply() -> None:
        equipment = engine.equipments.get(rng.choice(equipments()))
        engine.equipments.update(equipment.id, {"separateSupply": not equipment.separate_supply})

    def add_binding() -> None:
        device = engine.devices.get(devices[rng.choice(sorted(devices))][0])
        datum = device.data[rng.choice(sorted(device.data))]
        alias = rng.choice((datum.key, datum.key, "temperature", "power", "state", "flow", "other"))
        engine.equipments.add_data_binding(rng.choice(equipments()), datum.id, alias)

    def remove_binding() -> None:
        equipment = engine.equipments.get(rng.choice(equipments()))
        if equipment.data_bindings:
            engine.equipments.remove_data_binding(equipment.id, rng.choice(list(equipment.data_bindings.values())).id)

    def delete_equipment() -> None:
        engine.equipments.delete(rng.choice(equipments()))

    def device_status() -> None:
        engine.devices.update_status(FAKE_ID, rng.choice(sorted(devices)), rng.choice(("online", "offline")))

    def replace_device() -> None:  # its bindings cascade away; the same source comes back as a new device
        source = rng.choice(sorted(devices))
        engine.devices.delete(devices[source][0])
        discover(source, rng.choice(list(_KINDS)))

    def zone_change() -> None:  # tree changes recompute silently
        choice = rng.random()
        if choice < 0.4:
            engine.zones.create(f"z{rng.randrange(10**6)}", rng.choice(zones()))
        elif choice < 0.7:
            engine.zones.update(rng.choice([z for z in zones() if z != root]), {"parentId": rng.choice(zones())})
        else:
            engine.zones.delete(rng.choice([z for z in zones() if z != root]))

    operations = [
        (report, 60), (move, 8), (toggle_enabled, 3), (change_type, 5), (toggle_separate_supply, 2), (add_binding, 4),
        (remove_binding, 3), (create_equipment, 3), (delete_equipment, 2), (device_status, 5), (replace_device, 1), (zone_change, 2),
    ]  # fmt: skip

    # The aggregator reacts to one event at a time (a message of three values is three equipment
    # changes): check after each of them, from a handler subscribed after the aggregator's. The bus
    # swallows what a handler raises, so failures are collected and asserted after each step.
    announced: list[dict] = []
    engine.bus.on("zone.data.changed", announced.append)
    failures: list[str] = []
    check = {"previous": engine.aggregator.all_json(), "started": "", "step": "", "count": 0}

    def checkpoint(event: dict) -> None:
        previous, current = check["previous"], engine.aggregator.all_json()
        events = list(announced)
        announced.clear()
        check["previous"] = current
        check["count"] += 1
        try:
            assert {z: _without_since(d) for z, d in current.items()} == _from_scratch(engine)
            zones = [e["zoneId"] for e in events]
            assert len(zones) == len(set(zones)), zones
            for n, zone_id in enumerate(zones):  # a zone before its ancestors
                assert not {z.id for z in engine.zones.ancestors(zone_id)} & set(zones[:n]), zones
            if event["type"].startswith("zone."):
                assert zones == []  # tree changes recompute silently
            else:
                assert set(zones) == {z for z in current if z in previous and _without_since(previous[z]) != _without_since(current[z])}
            for e in events:
                assert e["aggregatedData"] is current[e["zoneId"]]
            for zone_id, data in current.items():
                before = previous.get(zone_id)
                if not data["motionSensors"]:
                    assert data["motionSince"] is None
                elif before is not None and before["motion"] != data["motion"]:
                    assert data["motionSince"] >= check["started"]
                elif before is not None and before["motionSensors"]:
                    assert data["motionSince"] == before["motionSince"]
        except AssertionError as error:
            failures.append(f"{check['step']}, after {event['type']}: {error}")

    for name in (
        "equipment.data.changed", "equipment.created", "equipment.updated", "equipment.removed",
        "device.status_changed", "device.removed", "zone.created", "zone.updated", "zone.removed",
    ):  # fmt: skip
        engine.bus.on(name, checkpoint)
    for step in range(2000):
        operation = rng.choices([o for o, _ in operations], [w for _, w in operations])[0]
        if operation is not create_equipment and not equipments():
            operation = create_equipment
        check["step"], check["started"] = f"step {step} ({operation.__name__})", iso_utc(now_ms())
        try:
            operation()
        except ApiError:
            pass  # refused (a second main meter, a zone under itself, a zone not empty...)
        assert not failures, failures[0]
    assert check["count"] > 2000
    assert json.loads(engine.aggregator.all_bytes()) == engine.aggregator.all_json()
