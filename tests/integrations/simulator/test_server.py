"""The simulator in a real server, over real HTTP and WebSocket: enabled on a fresh data directory,
it gives a home whose devices report and whose lights, plugs and shutters answer orders."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hausbox.integrations.builtin.simulator.home import VirtualHome
from tests.harness import wait_for
from tests.wsclient import Collector, expect_welcome, subscribe

ROOMS, SEED = 4, 11
PREFIX = "integration.simulator."


def simulator(home) -> dict[str, Any]:
    listed = home.admin.get("/integrations")
    assert listed.status_code == 200, listed.text
    return next(i for i in listed.json() if i["id"] == "simulator")


def configure(home, **values: Any) -> None:
    response = home.admin.put("/settings", {PREFIX + key: value for key, value in values.items()})
    assert response.status_code == 200, response.text


def sim_devices(home) -> dict[str, dict[str, Any]]:
    """The simulator's devices by source id."""
    return {d["sourceDeviceId"]: d for d in home.admin.get("/devices").json() if d["integrationId"] == "simulator"}


def value(device: dict[str, Any], key: str) -> Any:
    return next(d["value"] for d in device["data"] if d["key"] == key)


def device_value(home, device_id: str, key: str) -> Any:
    response = home.admin.get(f"/devices/{device_id}")
    assert response.status_code == 200, response.text
    return value(response.json(), key)


def root_zone(home) -> str:
    return home.admin.get("/zones").json()[0]["id"]


def equipment(home, name: str, kind: str, device_id: str) -> dict[str, Any]:
    created = home.admin.post("/equipments", {"name": name, "type": kind, "zoneId": root_zone(home), "deviceIds": [device_id]})
    assert created.status_code == 201, created.text
    return created.json()


def order(home, equipment_id: str, alias: str, value: Any) -> None:
    response = home.admin.post(f"/equipments/{equipment_id}/orders/{alias}", {"value": value})
    assert response.status_code == 200, response.text


def equipment_data(home, equipment_id: str) -> dict[str, Any]:
    return home.admin.get(f"/equipments/{equipment_id}").json()["data"]


@pytest.fixture(scope="module")
def sim_home(home):
    """The module's server with the simulator enabled (fast enough for the tests to see change)."""
    assert simulator(home)["status"] == "not_configured"
    assert not sim_devices(home)
    configure(home, enabled=True, rooms=ROOMS, seed=SEED, message_rate=100)
    wait_for(lambda: simulator(home)["status"] == "connected", timeout=10)
    return home


def test_enabled_it_discovers_a_home_of_online_devices_with_data(sim_home):
    expected = VirtualHome(rooms=ROOMS, seed=SEED)
    devices = sim_devices(sim_home)
    assert set(devices) == set(expected.devices)
    listed = simulator(sim_home)
    assert listed["configured"] is True and listed["deviceCount"] == len(expected.devices) and listed["offlineDeviceCount"] == 0
    assert {s["key"] for s in listed["settings"]} >= {"enabled", "rooms", "message_rate", "seed"}
    light = devices["sim-salon-light-1"]
    assert light["name"] == "Salon light 1" and light["source"] == "simulator" and light["powerSource"] == "mains"
    assert {(o["key"], o.get("category")) for o in light["orders"]} == {("state", "light_toggle")}
    assert {d["key"]: d["category"] for d in light["data"]} == {"state": "light_state", "power": "power"}
    for device in devices.values():
        assert device["status"] == "online", device["name"]
        for datum in device["data"]:
            if datum["key"] != "action":  # a button has not been pressed yet
                assert datum["value"] is not None, (device["name"], datum["key"])
    climate = devices["sim-salon-climate-1"]
    assert climate["powerSource"] == "battery"
    assert {d["key"]: d.get("unit") for d in climate["data"]} == {"temperature": "°C", "humidity": "%", "battery": "%"}
    plug = devices["sim-salon-plug-1"]
    assert {o["key"]: o.get("category") for o in plug["orders"]} == {"state": "toggle_power"}
    assert {d["key"]: d.get("unit") for d in plug["data"]}.items() >= {"power": "W", "energy": "kWh"}.items()
    thermostat = devices["sim-thermostat"]
    assert {o["key"]: o.get("category") for o in thermostat["orders"]} == {"setpoint": "set_setpoint", "system_mode": "set_operation_mode"}
    assert next(o for o in thermostat["orders"] if o["key"] == "system_mode")["enumValues"] == ["auto", "heat", "cool", "off"]
    assert {o["key"] for o in devices["sim-vmc"]["orders"]} == {"low", "high"}
    assert {o.get("category") for o in devices["sim-gate"]["orders"]} == {"gate_trigger"}
    assert {o.get("category") for o in devices["sim-water-valve"]["orders"]} == {"valve_toggle"}


def test_a_light_answers_orders_through_its_equipment(sim_home):
    light = sim_devices(sim_home)["sim-salon-light-1"]
    lamp = equipment(sim_home, "Salon lamp", "light_onoff", light["id"])
    for wanted in ("OFF", "ON", "OFF", "ON"):
        order(sim_home, lamp["id"], "state", wanted)
        wait_for(lambda: equipment_data(sim_home, lamp["id"]).get("state") == wanted, timeout=3)
        power = equipment_data(sim_home, lamp["id"])["power"]
        assert (power > 0) if wanted == "ON" else power == 0, (wanted, power)
    assert device_value(sim_home, light["id"], "power") > 0
    # Zone aggregation sees it as a light that is on.
    aggregated = sim_home.admin.get("/zones/aggregation").json()[root_zone(sim_home)]
    assert aggregated["lightsOn"] >= 1 and aggregated["lightsTotal"] >= 1


def test_a_dimmer_takes_a_brightness(sim_home):
    dimmer = sim_devices(sim_home)["sim-cuisine-dimmer-1"]
    spots = equipment(sim_home, "Spots cuisine", "light_dimmable", dimmer["id"])
    order(sim_home, spots["id"], "brightness", 100)
    wait_for(lambda: equipment_data(sim_home, spots["id"]).get("brightness") == 100, timeout=3)
    data = equipment_data(sim_home, spots["id"])
    assert data["state"] == "ON" and data["power"] > 0
    refused = sim_home.admin.post(f"/equipments/{spots['id']}/orders/brightness", {"value": 300})
    assert refused.status_code == 400, refused.text


def test_a_shutter_order_moves_its_position_over_time(sim_home):
    shutter = sim_devices(sim_home)["sim-salon-shutter-1"]
    cover = equipment(sim_home, "Volet salon", "shutter", shutter["id"])
    start = device_value(sim_home, shutter["id"], "position")
    target = 0 if start >= 50 else 100
    order(sim_home, cover["id"], "position", target)
    seen = []
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:
        seen.append(device_value(sim_home, shutter["id"], "position"))
        if seen[-1] == target:
            break
        time.sleep(0.2)
    assert seen[-1] == target, seen
    between = [p for p in seen if min(start, target) < p < max(start, target)]
    assert between, f"no position on the way from {start} to {target}: {seen}"
    assert seen == sorted(seen, reverse=target < start), seen
    assert equipment_data(sim_home, cover["id"])["position"] == target


def test_energy_increases_while_a_plug_is_on(sim_home):
    devices = sim_devices(sim_home)
    plugs = [d for s, d in devices.items() if "-plug-" in s]
    plug = max(plugs, key=lambda d: VirtualHome(rooms=ROOMS, seed=SEED).devices[d["sourceDeviceId"]].rated)
    socket = equipment(sim_home, "Prise", "switch", plug["id"])
    order(sim_home, socket["id"], "state", "ON")
    wait_for(lambda: device_value(sim_home, plug["id"], "power") > 0, timeout=3)
    first = device_value(sim_home, plug["id"], "energy")
    wait_for(lambda: device_value(sim_home, plug["id"], "energy") > first, timeout=15, interval=0.2)
    # The main meter counts it.
    assert device_value(sim_home, devices["sim-main-meter"]["id"], "power") > device_value(sim_home, plug["id"], "power")


def test_ventilation_speed_and_gate_trigger_reach_the_devices(sim_home):
    devices = sim_devices(sim_home)
    vmc = equipment(sim_home, "VMC", "vmc", devices["sim-vmc"]["id"])
    order(sim_home, vmc["id"], "speed", "v2")
    wait_for(lambda: (equipment_data(sim_home, vmc["id"]).get("low"), equipment_data(sim_home, vmc["id"]).get("high")) == ("OFF", "ON"), timeout=3)
    assert equipment_data(sim_home, vmc["id"])["power"] > 0
    order(sim_home, vmc["id"], "speed", "off")
    wait_for(lambda: equipment_data(sim_home, vmc["id"]).get("power") == 0, timeout=3)

    gate = equipment(sim_home, "Portail", "gate", devices["sim-gate"]["id"])
    assert [b["alias"] for b in gate["orderBindings"]] == ["command"]
    before = device_value(sim_home, devices["sim-gate"]["id"], "state")
    response = sim_home.admin.post(f"/equipments/{gate['id']}/orders/command", {"value": None})
    assert response.status_code == 200, response.text
    time.sleep(1.0)
    assert device_value(sim_home, devices["sim-gate"]["id"], "state") == before, "a gate takes a few seconds to travel"
    after = "open" if before == "closed" else "closed"
    wait_for(lambda: device_value(sim_home, devices["sim-gate"]["id"], "state") == after, timeout=5)
    assert device_value(sim_home, devices["sim-gate"]["id"], "contact") is (after == "closed")


def count_messages(collector: Collector, device_ids: set[str], since: float, until: float) -> int:
    """Distinct device messages (device, timestamp) carried by batches that arrived in the window."""
    messages = set()
    for at, message in collector.timed_messages():
        if since <= at < until and isinstance(message, list):
            for event in message:
                if event.get("type") == "device.data.updated" and event.get("deviceId") in device_ids:
                    messages.add((event["deviceId"], event["timestamp"]))
    return len(messages)


def test_message_rate_is_honoured(sim_home):
    configure(sim_home, message_rate=50, rooms=6)
    wait_for(lambda: simulator(sim_home)["status"] == "connected" and simulator(sim_home)["deviceCount"] == len(VirtualHome(6, SEED).devices), timeout=10)
    device_ids = {d["id"] for d in sim_devices(sim_home).values()}
    ws = sim_home.server.ws(sim_home.admin_pair["accessToken"])
    expect_welcome(ws)
    subscribe(ws, "devices")
    collector = Collector(ws)
    try:
        time.sleep(0.5)
        start = time.monotonic()
        time.sleep(2.25)
        count = count_messages(collector, device_ids, start, start + 2.0)
    finally:
        collector.close()
    assert 70 <= count <= 130, f"{count} messages in 2 s at 50/s"


def test_disabling_stops_it_and_enabling_restarts_it(sim_home):
    devices = sim_devices(sim_home)
    meter = devices["sim-main-meter"]["id"]
    lamp = equipment(sim_home, "Entrance lamp", "light_onoff", devices["sim-salon-light-1"]["id"])
    configure(sim_home, enabled=False)
    wait_for(lambda: simulator(sim_home)["status"] == "not_configured", timeout=5)
    wait_for(lambda: simulator(sim_home)["offlineDeviceCount"] == len(devices), timeout=5)
    time.sleep(0.3)
    frozen = sim_home.admin.get(f"/devices/{meter}").json()
    time.sleep(1.0)
    assert sim_home.admin.get(f"/devices/{meter}").json()["lastSeen"] == frozen["lastSeen"], "still reporting after disable"
    refused = sim_home.admin.post(f"/equipments/{lamp['id']}/orders/state", {"value": "OFF"})
    assert refused.status_code == 503, refused.text

    configure(sim_home, enabled=True, rooms=2)  # a smaller home: the extra rooms' devices go
    wait_for(lambda: simulator(sim_home)["status"] == "connected", timeout=10)
    smaller = VirtualHome(rooms=2, seed=SEED)
    wait_for(lambda: set(sim_devices(sim_home)) == set(smaller.devices), timeout=5)
    assert simulator(sim_home)["offlineDeviceCount"] == 0
    wait_for(lambda: sim_home.admin.get(f"/devices/{meter}").json()["lastSeen"] != frozen["lastSeen"], timeout=5)
    # The same device ids as before (same source ids): the lamp's bindings survived.
    order(sim_home, lamp["id"], "state", "OFF")
    wait_for(lambda: equipment_data(sim_home, lamp["id"]).get("state") == "OFF", timeout=3)
