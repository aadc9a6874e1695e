from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.broker import Broker, Mqtt
from tests.harness import Home, wait_for
from tests.integrations.zigbee2mqtt import fixtures

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
        self.publish("bridge/devices", fixtures.bridge_devices() if entries is None else entries, retain=True)

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
        wanted = set(fixtures.kept_names())
        return wait_for(lambda: (lambda d: d if set(d) == wanted else None)(self.devices()), 10)

    def root_zone_id(self) -> str:
        return self.api.get("/zones").json()[0]["id"]

    def equipment(self, name: str, equipment_type: str, *device_names: str, zone_id: str | None = None) -> dict[str, Any]:
        devices = self.devices()
        body = {"name": name, "type": equipment_type, "zoneId": zone_id or self.root_zone_id(), "deviceIds": [devices[n]["id"] for n in device_names]}
        response = self.api.post("/equipments", body)
        assert response.status_code == 201, response.text
        return response.json()


@pytest.fixture
def z2m(make_server, broker, mqtt_client) -> Iterator[Z2m]:
    yield Z2m(Home(make_server()), broker, mqtt_client)
