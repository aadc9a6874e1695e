"""Building the 500-device home on a freshly started service: the same for every service the bench runs."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import analysis, home
from benchlib.api import Api, first_admin, wait_until
from benchlib.procs import Broker, Helper, Service, rss_mb


@dataclass
class Instance:
    """A service with its home, the load generator that speaks for its devices, and what was built."""

    label: str
    base: str
    service: Service
    loadgen: Helper
    api: Api | None = None
    token: str = ""
    device_index: dict[str, int] = field(default_factory=dict)  # device id -> device number
    equipments: list[dict[str, Any]] = field(default_factory=list)  # {id, type, device, orders}
    info: dict[str, Any] = field(default_factory=dict)


def start_instance(label: str, base: str, broker: Broker, workdir: Path, max_seconds: float) -> Instance:
    """Spawn a load generator (base topic ``base``) and a service on a fresh data directory. The
    load generator ends itself after ``max_seconds`` (it never outlives the bench): the run's whole
    budget, or an hour-long disk watch loses its load after its default 15 minutes (it did, thrice)."""
    args = ["--port", str(broker.port), "--workdir", str(workdir), "--base", base, "--max-seconds", str(max_seconds)]
    loadgen = Helper("loadgen", args, workdir / f"loadgen-{label}.log")
    service = Service(workdir / f"data-{label}", workdir / f"service-{label}.log")
    return Instance(label, base, service, loadgen)


def build_home(instance: Instance, broker: Broker, settle_s: float, workers: int = 6) -> Instance:
    """The retained device list, the service, its admin, the integration, 30 zones, 300 equipments."""
    t_setup = time.monotonic()
    loadgen = instance.loadgen
    loadgen.send({"cmd": "bridge"})
    if not loadgen.receive(30).get("published"):
        raise RuntimeError(f"{instance.label}: the retained bridge/devices was not acknowledged by the broker")
    service = instance.service.spawn()
    first_healthy = service.wait_healthy()
    api, instance.token = first_admin(service.url)
    instance.api = api
    t_discovery = time.monotonic()
    api.put("/settings", {"integration.zigbee2mqtt.mqtt_url": f"mqtt://127.0.0.1:{broker.port}", "integration.zigbee2mqtt.base_topic": instance.base})
    devices = wait_until(lambda: (lambda d: d if len(d) >= home.N_DEVICES else None)(api.get("/devices")), 120, 0.25, "500 devices discovered")
    discovery_s = time.monotonic() - t_discovery
    names = {home.name(d): d for d in range(home.N_DEVICES)}
    instance.device_index = {device["id"]: names[device["sourceDeviceId"]] for device in devices if device["sourceDeviceId"] in names}
    if len(instance.device_index) != home.N_DEVICES:
        raise RuntimeError(f"{instance.label}: {len(instance.device_index)} of {home.N_DEVICES} bench devices listed")
    id_of = {d: device_id for device_id, d in instance.device_index.items()}

    t_online = time.monotonic()
    loadgen.send({"cmd": "initial"})
    loadgen.receive(30)
    wait_until(lambda: api.get("/health").get("devices", {}).get("online", 0) >= home.N_DEVICES, 60, 0.2, "500 devices online")
    online_s = time.monotonic() - t_online

    # 30 zones (3 floors of 9 rooms) and 300 equipments (10 per zone), created by a few clients at
    # once, each with its own connection.
    local = threading.local()
    zone_posts: list[float] = []
    equipment_posts: list[float] = []

    def post(into: list[float], path: str, body: dict[str, Any]) -> Any:
        client = getattr(local, "api", None)
        if client is None:
            client = local.api = Api(service.url, instance.token)
        t = time.monotonic()
        answer = client.post(path, body)
        into.append(time.monotonic() - t)
        return answer

    t_topology = time.monotonic()
    sensors, plugs, lights = (home.devices_of(k) for k in (home.SENSOR, home.PLUG, home.LIGHT))
    with ThreadPoolExecutor(workers) as pool:
        floors = [post(zone_posts, "/zones", {"name": f"Floor {f}"})["id"] for f in range(3)]
        rooms = list(pool.map(lambda fr: post(zone_posts, "/zones", {"name": f"Room {fr[0]}.{fr[1]}", "parentId": floors[fr[0]]})["id"], [(f, r) for f in range(3) for r in range(9)]))
        zones = floors + rooms
        picks = [("sensor", d) for d in sensors[:100]] + [("switch", d) for d in plugs[:100]] + [("light_dimmable", d) for d in lights[:100]]

        def create(item: tuple[int, tuple[str, int]]) -> dict[str, Any]:
            n, (equipment_type, d) = item
            body = {"name": f"{equipment_type} {n:03d}", "type": equipment_type, "zoneId": zones[n % len(zones)], "deviceIds": [id_of[d]]}
            created = post(equipment_posts, "/equipments", body)
            return {"id": created["id"], "type": equipment_type, "device": d, "orders": [b["alias"] for b in created.get("orderBindings", [])]}

        instance.equipments = list(pool.map(create, enumerate(picks)))
    topology_s = time.monotonic() - t_topology
    time.sleep(settle_s)
    instance.info = {
        "devices": len(instance.device_index),
        "device_mix": {"sensor (temperature, humidity)": len(sensors), "plug (state, power)": len(plugs), "light (state, brightness)": len(lights)},
        "zones": len(zones),
        "zone_tree": "root > 3 floors > 9 rooms each",
        "equipments": len(instance.equipments),
        "equipment_mix": {"sensor": 100, "switch": 100, "light_dimmable": 100},
        "first_start_to_healthy_s": round(first_healthy, 3),
        "discovery_of_500_devices_s": round(discovery_s, 2),
        "all_online_after_initial_states_s": round(online_s, 2),
        "zones_and_equipments_created_s": round(topology_s, 2),
        "post_zone_latency": analysis.latency_ms(zone_posts),
        "post_equipment_latency": analysis.latency_ms(equipment_posts),
        "setup_clients": workers,
        "setup_s": round(time.monotonic() - t_setup, 1),
        "idle_rss_mb": rss_mb(service.pid),  # type: ignore[arg-type]
        "message_shape": "full device state per message (as zigbee2mqtt's cache_state), one value changed",
    }
    return instance
