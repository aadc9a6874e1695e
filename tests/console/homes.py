"""The home the browser tests look at: a real server with its first admin, a real mosquitto and the
zigbee2mqtt simulation (tests/zigbee.py) whose devices become equipments in three rooms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.broker import Broker, Mqtt
from tests.harness import PASSWORD, Home, Server
from tests.zigbee import Z2m, created


@dataclass
class ZigbeeHome:
    server: Server
    home: Home
    z2m: Z2m
    broker: Broker
    client: Mqtt
    zones: dict[str, str]
    equipments: dict[str, dict[str, Any]]

    def stop(self) -> None:
        self.client.close()
        self.broker.stop()
        self.server.kill()


def zigbee_home(tmp_path_factory, env: dict[str, str] | None = None) -> ZigbeeHome:
    server = Server(tmp_path_factory.mktemp("data") / "hausbox", env).start()
    broker = Broker(tmp_path_factory.mktemp("mosquitto")).start()
    client = Mqtt(broker)
    home = Home(server)
    z2m = Z2m(home, broker, client)
    z2m.connect()
    z2m.discover()
    client.subscribe("zigbee2mqtt/#")
    api = home.admin
    # History commits every second (5 by default): the charts' tests need not wait long.
    assert api.put("/settings", {"history.commitIntervalSeconds": 1}).status_code == 200
    root = z2m.root_zone_id()
    zones = {name: created(api.post("/zones", {"name": name, "parentId": root}))["id"] for name in ("Salon", "Cuisine", "Chambre")}
    equipments = {
        "spot": z2m.equipment("Spot cuisine", "light_onoff", "cuisine/spot", zone_id=zones["Cuisine"]),
        "lamp": z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet", zone_id=zones["Chambre"]),
        "blind": z2m.equipment("Store chambre", "shutter", "chambre_store", zone_id=zones["Chambre"]),
        "weather": z2m.equipment("Météo salon", "sensor", "salon_meteo", zone_id=zones["Salon"]),
        "ceiling": z2m.equipment("Plafonnier", "light_dimmable", "salon_plafonnier", zone_id=zones["Salon"]),
        "radiator": z2m.equipment("Radiateur", "thermostat", "salon_radiateur", zone_id=zones["Salon"]),
    }
    # A timed action for the spot: on for 10 minutes, then back off.
    timed = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 600_000}
    assert api.put(f"/equipments/{equipments['spot']['id']}", {"timedCommand": timed}).status_code == 200
    created(api.post("/modes", {"name": "Nuit"}))
    return ZigbeeHome(server, home, z2m, broker, client, zones, equipments)


def sign_in(browser, url: str, username: str, password: str = PASSWORD) -> None:
    browser.open(url, "/signin")
    browser.fill("#signin-username", username)
    browser.fill("#signin-password", password)
    browser.click("#signin-submit")
    browser.at("/")


def sign_out(browser) -> None:
    browser.click("#signout")
    browser.find("#signin-form")
