"""zigbee2mqtt in the tests: the shared fixture set (bridge/devices, states, orders) and views over it;
a test client playing zigbee2mqtt on a real broker against a real server (``Z2m``); and the
end-to-end set-up of the mode, button and calendar tests (``zigbee_home``, ``wait_sets``)."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from tests.broker import Broker, Mqtt
from tests.harness import Home, wait_for

# The shared fixture set A, beside the checkout (its README says how it was generated).
FIXTURES = Path(os.environ.get("HAUSBOX_Z2M_FIXTURES") or Path(__file__).resolve().parents[2] / "shared" / "fixtures")
if not (FIXTURES / "bridge-devices.json").is_file():
    raise RuntimeError(f"zigbee2mqtt fixtures not found at {FIXTURES}: set HAUSBOX_Z2M_FIXTURES")

# Entries of bridge-devices.json that are not devices we drive.
SKIPPED = {"Coordinator", "grenier_repeteur", "0x842e14fffe5b6c7d"}  # garage_prise_inconnue: a generated definition, driven


@lru_cache(maxsize=None)
def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def bridge_devices() -> list[dict[str, Any]]:
    return json.loads(json.dumps(_load("bridge-devices.json")))  # a fresh copy each time


def entry(name: str) -> dict[str, Any]:
    return next(e for e in bridge_devices() if e["friendly_name"] == name)


def states() -> dict[str, Any]:
    return _load("states.json")


def orders() -> dict[str, Any]:
    return _load("orders.json")


def kept_names() -> list[str]:
    return [e["friendly_name"] for e in bridge_devices() if e["friendly_name"] not in SKIPPED]


def published(payload_entry: dict[str, Any]) -> dict[str, Any]:
    """The message zigbee2mqtt really publishes: the expose keys plus the extra ones."""
    return {**payload_entry["payload"], **payload_entry.get("extra_keys", {})}


# ---- a client playing zigbee2mqtt -----------------------------------------------------------------
KEY = "integration.zigbee2mqtt."
MASK = "••••••••"


class Z2m:
    """A set-up server, a real broker, and a test client playing zigbee2mqtt on it."""

    def __init__(self, home: Home, broker: Broker, client: Mqtt, base: str = "zigbee2mqtt"):
        self.home = home
        self.api = home.admin
        self.broker = broker
        self.client = client
        self.base = base

    # ---- settings and status ---------------------------------------------------------------------
    def configure(self, **values: Any) -> None:
        body = {KEY + key: value for key, value in {"mqtt_url": self.broker.url, **values}.items()}
        response = self.api.put("/settings", body)
        assert response.status_code == 200, response.text

    def integration(self) -> dict[str, Any]:
        response = self.api.get("/integrations")
        assert response.status_code == 200, response.text
        return next(i for i in response.json() if i["id"] == "zigbee2mqtt")

    def wait_status(self, status: str, timeout: float = 10.0) -> dict[str, Any]:
        return wait_for(lambda: (lambda i: i if i["status"] == status else None)(self.integration()), timeout)

    def connect(self, **values: Any) -> None:
        self.configure(**values)
        self.wait_status("connected")

    # ---- zigbee2mqtt's side ------------------------------------------------------------------------
    def publish(self, name: str, payload: Any, retain: bool = False) -> None:
        self.client.publish(f"{self.base}/{name}", payload, retain=retain)

    def publish_devices(self, entries: list[dict[str, Any]] | None = None) -> None:
        self.publish("bridge/devices", bridge_devices() if entries is None else entries, retain=True)

    # ---- what the server says ------------------------------------------------------------------------
    def devices(self) -> dict[str, dict[str, Any]]:
        response = self.api.get("/devices")
        assert response.status_code == 200, response.text
        return {d["sourceDeviceId"]: d for d in response.json() if d["integrationId"] == "zigbee2mqtt"}

    def device(self, name: str) -> dict[str, Any] | None:
        return self.devices().get(name)

    def values(self, name: str) -> dict[str, Any]:
        device = self.device(name)
        return {d["key"]: d["value"] for d in device["data"]} if device else {}

    def wait_value(self, name: str, key: str, value: Any, timeout: float = 5.0) -> None:
        wait_for(lambda: self.values(name).get(key) == value, timeout)

    def discover(self) -> dict[str, dict[str, Any]]:
        """Publish the fixture device list and wait until every kept device exists."""
        self.publish_devices()
        wanted = set(kept_names())
        return wait_for(lambda: (lambda d: d if set(d) == wanted else None)(self.devices()), 10)

    def root_zone_id(self) -> str:
        return self.api.get("/zones").json()[0]["id"]

    def equipment(self, name: str, equipment_type: str, *device_names: str, zone_id: str | None = None) -> dict[str, Any]:
        devices = self.devices()
        body = {"name": name, "type": equipment_type, "zoneId": zone_id or self.root_zone_id(), "deviceIds": [devices[n]["id"] for n in device_names]}
        response = self.api.post("/equipments", body)
        assert response.status_code == 201, response.text
        return response.json()


# ---- the end-to-end set-up -----------------------------------------------------------------------
def zigbee_home(make_server, broker, mqtt_client, env: dict[str, str] | None = None, module: str = "hausbox", data_dir: Path | None = None) -> Z2m:
    z2m = Z2m(Home(make_server(data_dir=data_dir, env=env, module=module)), broker, mqtt_client)
    z2m.connect()
    z2m.discover()
    z2m.client.subscribe("zigbee2mqtt/#")
    return z2m


def created(response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def wait_sets(z2m: Z2m, name: str, count: int, timeout: float = 10.0) -> list[Any]:
    """The first ``count`` orders published on ``zigbee2mqtt/<name>/set``."""
    topic = f"{z2m.base}/{name}/set"
    return wait_for(lambda: (lambda got: got if len(got) >= count else None)(z2m.client.received(topic)), timeout)
