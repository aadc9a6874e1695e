"""The virtual home model on its own: layout, declarations, behaviour over (given) time."""

from __future__ import annotations

import time

import pytest

from hausbox.devices.categories import CATEGORY_UNITS
from hausbox.integrations.builtin.simulator.home import (
    GATE_TRAVEL_S,
    SHUTTER_TRAVEL_S,
    ClimateSensor,
    MotionSensor,
    Plug,
    VirtualHome,
    daylight,
)

T0 = 1_750_000_000.0


def home(rooms: int = 4, seed=1) -> VirtualHome:
    return VirtualHome(rooms=rooms, seed=seed, now=T0)


def local_time(hour: int) -> float:
    """Seconds since the epoch of ``hour``:00 local time on a day in June."""
    return time.mktime((2026, 6, 21, hour, 0, 0, 0, 0, -1))


def test_the_same_seed_builds_the_same_home_and_another_seed_another_one():
    a, b = home(seed=7), home(seed=7)
    assert list(a.devices) == list(b.devices)
    assert [d.state(T0) for d in a.devices.values()] == [d.state(T0) for d in b.devices.values()]
    assert [d.discovered() for d in a.devices.values()] == [d.discovered() for d in b.devices.values()]
    others = [home(seed=s) for s in range(2, 6)]
    assert any([d.state(T0) for d in o.devices.values()] != [d.state(T0) for d in a.devices.values()] for o in others)


def test_every_room_has_its_devices_and_the_home_its_singletons():
    model = home(rooms=3)
    ids = set(model.devices)
    for slug, _ in model.rooms:
        for kind in ("light-1", "dimmer-1", "shutter-1", "motion-1", "climate-1", "plug-1"):
            assert f"sim-{slug}-{kind}" in ids
    assert {"sim-main-meter", "sim-solar-meter", "sim-button-1", "sim-thermostat", "sim-vmc", "sim-water-valve", "sim-gate"} <= ids
    assert "sim-salon-light-1" in ids  # the first room
    assert len(home(rooms=12).rooms) == 12 and home(rooms=12).rooms[-1] == ("room-12", "Room 12")


def test_declarations_are_complete_and_consistent():
    model = home(rooms=2)
    ieee = set()
    for source_id, device in model.devices.items():
        found = device.discovered()
        assert found.source_device_id == source_id and found.name and found.model
        assert found.power_source in ("mains", "battery")
        ieee.add(found.ieee_address)
        keys = {d.key for d in found.data}
        state = device.state(T0)
        assert set(state) <= keys, f"{source_id} reports undeclared keys"
        for datum in found.data:
            assert datum.type in ("boolean", "number", "enum", "text", "json")
            if datum.category in CATEGORY_UNITS:
                assert datum.unit == CATEGORY_UNITS[datum.category], (source_id, datum.key)
            if datum.type == "enum":
                assert datum.enum_values, (source_id, datum.key)
                if datum.key in state:
                    assert state[datum.key] in datum.enum_values
        for order in found.orders:
            assert order.category, (source_id, order.key)
            if order.type == "enum":
                assert order.enum_values
    assert len(ieee) == len(model.devices)
    battery_powered = {s for s, d in model.devices.items() if d.power_source == "battery"}
    assert "sim-salon-motion-1" in battery_powered and "sim-salon-light-1" not in battery_powered


def test_orders_change_the_reported_state_and_power_follows_it():
    model = home()
    light = model.devices["sim-salon-light-1"]
    model.execute("sim-salon-light-1", "state", "OFF", T0)
    assert light.state(T0) == {"state": "OFF", "power": 0.0}
    model.execute("sim-salon-light-1", "state", "ON", T0)
    assert light.state(T0)["state"] == "ON" and light.state(T0)["power"] > 0
    model.execute("sim-salon-light-1", "state", "TOGGLE", T0)
    assert light.state(T0)["state"] == "OFF"

    dimmer = model.devices["sim-salon-dimmer-1"]
    model.execute("sim-salon-dimmer-1", "brightness", 127, T0)
    half = dimmer.state(T0)
    assert half["state"] == "ON" and half["brightness"] == 127 and half["power"] > 0
    model.execute("sim-salon-dimmer-1", "brightness", 254, T0)
    assert dimmer.state(T0)["power"] > half["power"]
    model.execute("sim-salon-dimmer-1", "brightness", 0, T0)
    assert dimmer.state(T0)["state"] == "OFF" and dimmer.state(T0)["power"] == 0

    thermostat = model.devices["sim-thermostat"]
    model.execute("sim-thermostat", "setpoint", 22.5, T0)
    model.execute("sim-thermostat", "system_mode", "cool", T0)
    assert thermostat.state(T0)["setpoint"] == 22.5 and thermostat.state(T0)["system_mode"] == "cool"

    vmc = model.devices["sim-vmc"]
    model.execute("sim-vmc", "low", "OFF", T0)
    model.execute("sim-vmc", "high", "OFF", T0)
    assert vmc.state(T0) == {"low": "OFF", "high": "OFF", "power": 0.0}
    model.execute("sim-vmc", "high", "ON", T0)
    assert vmc.state(T0)["high"] == "ON" and vmc.state(T0)["power"] > 0

    valve = model.devices["sim-water-valve"]
    assert valve.report(T0) is None  # closed: nothing to say
    model.execute("sim-water-valve", "state", "ON", T0)
    assert valve.state(T0)["state"] == "ON" and valve.state(T0)["flow"] > 0
    assert valve.report(T0 + 1)["flow"] > 0


@pytest.mark.parametrize(
    "source_id, key, value",
    [
        ("sim-salon-light-1", "brightness", 10),  # an on/off light has no brightness
        ("sim-salon-light-1", "state", "BLINK"),
        ("sim-salon-light-1", "state", 3),
        ("sim-salon-dimmer-1", "brightness", 255),
        ("sim-salon-dimmer-1", "brightness", "bright"),
        ("sim-salon-dimmer-1", "brightness", True),
        ("sim-salon-shutter-1", "position", -1),
        ("sim-salon-shutter-1", "state", "UP"),
        ("sim-thermostat", "setpoint", 45),
        ("sim-thermostat", "system_mode", "dry"),
        ("sim-gate", "trigger", "OPEN"),
        ("sim-main-meter", "power", 0),  # a meter takes no order
        ("sim-nowhere", "state", "ON"),
    ],
)
def test_unknown_keys_and_bad_values_raise_value_error(source_id, key, value):
    with pytest.raises(ValueError):
        home().execute(source_id, key, value, T0)


def test_a_shutter_travels_towards_its_target_over_a_few_seconds():
    model = home()
    model.execute("sim-salon-shutter-1", "position", 0, T0)
    model.animate(T0 + SHUTTER_TRAVEL_S + 1)
    shutter = model.devices["sim-salon-shutter-1"]
    assert shutter.state(T0) == {"state": "CLOSE", "position": 0} and not model.moving
    start = T0 + 10
    model.execute("sim-salon-shutter-1", "position", 100, start)
    assert "sim-salon-shutter-1" in model.moving
    positions = []
    for tick in range(1, 20):
        for source_id, payload in model.animate(start + tick * 0.5):
            assert source_id == "sim-salon-shutter-1"
            positions.append(payload["position"])
    assert positions == sorted(positions) and positions[-1] == 100
    assert any(0 < p < 100 for p in positions)
    assert abs(len(positions) * 0.5 - SHUTTER_TRAVEL_S) <= 0.5
    assert shutter.state(start + 20) == {"state": "OPEN", "position": 100} and not model.moving
    # STOP halts it where it is.
    later = start + 30
    model.execute("sim-salon-shutter-1", "state", "CLOSE", later)
    model.execute("sim-salon-shutter-1", "state", "STOP", later + SHUTTER_TRAVEL_S / 2)
    assert shutter.state(later + 60) == {"state": "STOP", "position": 50} and not model.moving


def test_the_gate_changes_state_after_its_travel_time():
    model = home()
    gate = model.devices["sim-gate"]
    assert gate.state(T0) == {"state": "closed", "contact": True}
    model.execute("sim-gate", "trigger", "TRIGGER", T0)
    assert model.animate(T0 + GATE_TRAVEL_S / 2) == []
    assert model.animate(T0 + GATE_TRAVEL_S) == [("sim-gate", {"state": "open", "contact": False})]
    model.execute("sim-gate", "trigger", None, T0 + 10)
    assert model.animate(T0 + 10 + GATE_TRAVEL_S)[0][1]["state"] == "closed"


def test_energy_integrates_power_over_time_and_only_while_on():
    model = home()
    plug = next(d for d in model.devices.values() if isinstance(d, Plug))
    model.execute(plug.source_id, "state", "OFF", T0)
    off = plug.state(T0)["energy"]
    assert plug.state(T0 + 3600)["energy"] == off
    model.execute(plug.source_id, "state", "ON", T0 + 3600)
    on = plug.state(T0 + 7200)
    assert on["energy"] == pytest.approx(off + plug.rated / 1000, rel=0.05)
    assert on["power"] > 0


def test_the_main_meter_is_the_sum_of_the_consumers_plus_a_base_load():
    model = home()
    meter = model.devices["sim-main-meter"]
    for source_id, device in model.devices.items():
        for key in ("state", "low", "high"):
            if key in {o.key for o in device.order_specs()} and device.consumer:
                model.execute(source_id, key, "OFF", T0)
    idle = meter.state(T0)["power"]
    assert 100 <= idle <= 300
    model.execute("sim-salon-plug-1", "state", "ON", T0)
    plug_power = model.devices["sim-salon-plug-1"].state(T0)["power"]
    assert meter.state(T0)["power"] == pytest.approx(idle + plug_power, abs=0.2)
    before = meter.state(T0)["energy"]
    assert meter.state(T0 + 3600)["energy"] == pytest.approx(before + (idle + plug_power) / 1000, abs=0.01)


def test_solar_production_follows_the_day():
    assert daylight(local_time(2)) == 0 and daylight(local_time(23)) == 0
    assert daylight(local_time(13)) > 0.95 > daylight(local_time(9)) > 0
    model = home()
    solar = model.devices["sim-solar-meter"]
    solar.report(local_time(2))
    solar.state(local_time(2))
    assert solar.report(local_time(3)) is None  # nothing to say at night
    noon = solar.report(local_time(13))
    assert noon is not None and noon["power"] > solar.peak * 0.3


def test_every_rotation_message_carries_a_new_value_or_a_repeat_that_is_news():
    model = home(rooms=4)
    now = local_time(13)
    last: dict[str, dict] = {source_id: d.state(now) for source_id, d in model.devices.items()}
    seen = set()
    for n in range(500):
        report = model.next_report(now + n)
        assert report is not None
        source_id, payload = report
        seen.add(source_id)
        device = model.devices[source_id]
        changed = {k for k, v in payload.items() if last[source_id].get(k) != v}
        assert changed or isinstance(device, MotionSensor) or "action" in payload, (source_id, payload)
        last[source_id].update(payload)
    assert any(isinstance(model.devices[s], ClimateSensor) for s in seen)
    assert "sim-main-meter" in seen and any(s.startswith("sim-button") for s in seen)
    assert not any("light" in s or "shutter" in s for s in seen)  # actuators report on change only


def test_batteries_drain_slowly():
    model = home()
    sensor = model.devices["sim-salon-climate-1"]
    start = sensor.battery.level(T0)
    assert sensor.battery.level(T0 + 60) == start
    week = sensor.battery.level(T0 + 7 * 86400)
    assert 1 <= week < start


def test_a_seed_may_be_text():
    assert list(home(seed="demo").devices) == list(home(seed="demo").devices)

