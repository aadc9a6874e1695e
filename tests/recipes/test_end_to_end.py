"""End to end: a real server, a real mosquitto, the zigbee2mqtt integration, a motion-light instance.

A motion message published as zigbee2mqtt would publish it makes the recipe turn the light on: the
order arrives on ``zigbee2mqtt/<light>/set``. The instance and its state survive a server restart.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.harness import Home, wait_for
from tests.zigbee import Z2m

LIGHT, SENSOR = "chambre_lampe_chevet", "couloir_mouvement"


@pytest.fixture
def z2m(make_server, broker, mqtt_client) -> Iterator[Z2m]:
    yield Z2m(Home(make_server()), broker, mqtt_client)


def test_motion_published_on_mqtt_turns_the_light_on_through_a_recipe(z2m):
    z2m.connect()
    z2m.discover()
    z2m.client.subscribe(f"{z2m.base}/#")
    z2m.publish(LIGHT, {"state": "OFF", "brightness": 10})
    z2m.publish(SENSOR, {"illuminance": 3, "occupancy": False})
    z2m.wait_value(SENSOR, "occupancy", False)
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", LIGHT)
    z2m.equipment("Mouvement couloir", "sensor", SENSOR)
    root = z2m.root_zone_id()
    created = z2m.api.post("/recipe-instances", {"recipeId": "motion-light", "params": {"zone": root, "lights": [lamp["id"]], "timeout": "10m"}})
    assert created.status_code == 201, created.text
    iid = created.json()["id"]

    z2m.publish(SENSOR, {"illuminance": 3, "occupancy": True, "battery": 100})
    wait_for(lambda: z2m.client.received(f"{z2m.base}/{LIGHT}/set") == [{"state": "ON"}], timeout=5)

    # zigbee2mqtt answers with the new state: the echo is not a manual change; motion ends: timer.
    z2m.publish(LIGHT, {"state": "ON", "brightness": 10})
    z2m.publish(SENSOR, {"illuminance": 3, "occupancy": False})

    def instance():
        return next(i for i in z2m.api.get("/recipe-instances").json() if i["id"] == iid)

    state = wait_for(lambda: (lambda s: s if s.get("timerExpiresAt") else None)(instance()["state"]), timeout=5)
    assert state.get("overrideMode") in (None, False)
    assert any(e["message"] == "Lights on (motion)" for e in z2m.api.get(f"/recipe-instances/{iid}/log").json())

    # Restart: the instance, its parameters and its state are back, and it runs again.
    z2m.home.server.restart()
    api = z2m.home.server.api(z2m.home.login("admin")["accessToken"])
    again = next(i for i in api.get("/recipe-instances").json() if i["id"] == iid)
    assert again["state"] == state and again["params"]["timeout"] == "10m"
    assert again["enabled"] is True and again["running"] is True
