"""End to end over a real server and a real mosquitto: discovery, states, availability, resync, orders."""

from __future__ import annotations

from tests.harness import wait_for
from tests import zigbee
from tests.wsclient import Collector, events_in, expect_welcome, subscribe


def expected_values() -> dict[str, dict]:
    """Per device, the last value of every key once all the fixture messages are played in order."""
    values: dict[str, dict] = {}
    for name, device in zigbee.states()["devices"].items():
        for message in device["payloads"]:
            values.setdefault(name, {}).update(message["payload"])
    return values


def test_not_configured_until_a_broker_url_is_set(z2m):
    listed = z2m.integration()
    assert listed["status"] == "not_configured" and listed["configured"] is False
    assert [s["key"] for s in listed["settings"]] == ["mqtt_url", "base_topic", "mqtt_username", "mqtt_password", "mqtt_client_id"]
    assert next(s for s in listed["settings"] if s["key"] == "mqtt_password")["type"] == "password"
    z2m.connect(mqtt_password="not-used-without-a-user")
    listed = z2m.integration()
    assert listed["configured"] is True and "error" not in listed
    assert listed["settingValues"]["mqtt_password"] == zigbee.MASK


def test_discovery_and_every_fixture_state_over_mqtt(z2m):
    z2m.connect()
    devices = z2m.discover()
    for name in zigbee.SKIPPED:
        assert name not in devices
    bulb = devices["chambre_lampe_chevet"]
    assert (bulb["manufacturer"], bulb["model"], bulb["powerSource"], bulb["ieeeAddress"], bulb["status"]) == ("IKEA", "LED1624G9", "mains", "0x000d6ffffe7b31e0", "unknown")
    assert (bulb["name"], bulb["source"]) == ("chambre_lampe_chevet", "zigbee2mqtt")
    state_order = next(o for o in bulb["orders"] if o["key"] == "state")
    assert (state_order["type"], state_order["category"], state_order["enumValues"]) == ("enum", "light_toggle", ["ON", "OFF", "TOGGLE"])
    raw = z2m.api.get(f"/devices/{bulb['id']}/raw").json()
    assert raw["expose"] == zigbee.entry("chambre_lampe_chevet")["definition"]["exposes"]

    # Every message of the fixtures, as zigbee2mqtt publishes it (with its non-expose keys), plus
    # noise that must change nothing: a non-JSON state, a JSON array, a command topic.
    z2m.publish("salon_plafonnier", "ON")
    z2m.publish("salon_plafonnier", [1, 2])
    z2m.publish("salon_plafonnier/set", {"state": "OFF", "brightness": 1})
    z2m.publish("cuisine/spot/set", {"state": "OFF"})
    for name, device in zigbee.states()["devices"].items():
        for message in device["payloads"]:
            z2m.client.publish(device["topic"], {**zigbee.published(message), "last_seen": "2026-04-19T10:00:00.000Z"})
    expected = {name: values for name, values in expected_values().items() if name in devices}

    def all_arrived():
        got = {name: z2m.values(name) for name in expected}
        return got if all(all(got[n].get(k) == v for k, v in values.items()) for n, values in expected.items()) else None

    got = wait_for(all_arrived, 10)
    for name, values in got.items():
        assert set(values) == {d["key"] for d in z2m.device(name)["data"]}
        assert not {"color_mode", "update", "last_seen", "action_source", "action_rate"} & set(values), name
    assert got["cuisine/spot"]["state"] == "OFF" and got["jardin/vanne"]["water_consumed"] == 48
    assert got["salon_lampadaire"]["color"] == {"hue": 32, "saturation": 82, "x": 0.4599, "y": 0.4106}
    assert got["garage_relais"]["state_l1"] == "OFF" and got["garage_relais"]["state_l2"] == "ON"
    assert got["salon_plafonnier"]["color_temp_startup"] == 65535
    assert all(d["status"] == "online" for d in z2m.devices().values())
    assert z2m.integration()["deviceCount"] == len(zigbee.kept_names())


def test_availability_sets_the_device_status(z2m):
    # Retained availability published before the device list: applied once the device exists.
    z2m.publish("salon_meteo/availability", {"state": "offline"}, retain=True)
    z2m.publish("cuisine/spot/availability", "online", retain=True)
    z2m.publish_devices()
    z2m.connect()
    wait_for(lambda: len(z2m.devices()) == len(zigbee.kept_names()), 10)
    wait_for(lambda: z2m.device("salon_meteo")["status"] == "offline" and z2m.device("cuisine/spot")["status"] == "online")
    assert z2m.device("entree_porte")["status"] == "unknown"
    z2m.publish("entree_porte/availability", "offline")
    wait_for(lambda: z2m.device("entree_porte")["status"] == "offline")
    z2m.publish("entree_porte/availability", {"state": "online"})
    wait_for(lambda: z2m.device("entree_porte")["status"] == "online")
    z2m.publish("cuisine/spot/availability", {"state": "offline"})
    wait_for(lambda: z2m.device("cuisine/spot")["status"] == "offline")
    z2m.publish("cuisine/spot/availability", "garbage")
    z2m.publish("salon_meteo", {"temperature": 19.5})  # any message means online
    wait_for(lambda: z2m.device("salon_meteo")["status"] == "online")
    assert z2m.device("cuisine/spot")["status"] == "offline"
    assert z2m.integration()["offlineDeviceCount"] == 1


def test_rediscovery_keeps_ids_and_renames_removes_stale_devices_and_never_empties(z2m):
    z2m.connect()
    first = z2m.discover()
    ids = {name: (d["id"], {x["key"]: x["id"] for x in d["data"]}, {o["key"]: o["id"] for o in d["orders"]}) for name, d in first.items()}
    bulb_id = first["chambre_lampe_chevet"]["id"]
    assert z2m.api.put(f"/devices/{bulb_id}", {"name": "Lampe de chevet"}).status_code == 200

    # The same list again: same ids everywhere, the user's name kept.
    z2m.publish_devices()
    z2m.publish("salon_meteo", {"temperature": 21.5})  # processed after the list (one connection, in order)
    z2m.wait_value("salon_meteo", "temperature", 21.5)
    again = z2m.devices()
    assert {name: (d["id"], {x["key"]: x["id"] for x in d["data"]}, {o["key"]: o["id"] for o in d["orders"]}) for name, d in again.items()} == ids
    assert again["chambre_lampe_chevet"]["name"] == "Lampe de chevet"

    # An empty list, or one holding only the Coordinator, deletes nothing.
    for entries in ([], [zigbee.entry("Coordinator")]):
        z2m.publish_devices(entries)
        z2m.publish("salon_meteo", {"temperature": len(entries) + 30})
        z2m.wait_value("salon_meteo", "temperature", len(entries) + 30)
        assert set(z2m.devices()) == set(first)

    # A device gone from the list is removed; one renamed in zigbee2mqtt (same address) keeps its id;
    # a dropped expose removes that datum only.
    entries = [e for e in zigbee.bridge_devices() if e["friendly_name"] != "salon_meteo"]
    door = next(e for e in entries if e["friendly_name"] == "entree_porte")
    door["friendly_name"] = "entree/porte"
    bulb = next(e for e in entries if e["friendly_name"] == "chambre_lampe_chevet")
    bulb["definition"]["exposes"] = [x for x in bulb["definition"]["exposes"] if x.get("property") != "linkquality"]
    z2m.publish_devices(entries)
    wait_for(lambda: "salon_meteo" not in z2m.devices(), 5)
    after = z2m.devices()
    assert z2m.api.get(f"/devices/{first['salon_meteo']['id']}").status_code == 404
    assert "entree_porte" not in after and after["entree/porte"]["id"] == first["entree_porte"]["id"]
    assert {x["key"]: x["id"] for x in after["entree/porte"]["data"]} == ids["entree_porte"][1]
    bulb_data = {x["key"]: x["id"] for x in after["chambre_lampe_chevet"]["data"]}
    assert bulb_data == {k: v for k, v in ids["chambre_lampe_chevet"][1].items() if k != "linkquality"}
    assert after["chambre_lampe_chevet"]["name"] == "Lampe de chevet"
    z2m.publish("entree/porte", {"contact": False})
    z2m.wait_value("entree/porte", "contact", False)


def test_orders_through_the_api_arrive_on_the_set_topic(z2m):
    z2m.connect()
    z2m.discover()
    z2m.client.subscribe("zigbee2mqtt/#")
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet")
    spot = z2m.equipment("Spot cuisine", "light_onoff", "cuisine/spot")
    store = z2m.equipment("Store chambre", "shutter", "chambre_store")

    def order(equipment, alias, value):
        return z2m.api.post(f"/equipments/{equipment['id']}/orders/{alias}", {"value": value})

    response = order(lamp, "state", "on")
    assert response.status_code == 200, response.text
    assert response.json()["value"] == "ON"
    assert order(lamp, "brightness", 128).status_code == 200
    assert order(lamp, "color", {"x": 0.3, "y": 0.4}).status_code == 200
    assert order(spot, "state", "off").status_code == 200
    assert order(store, "position", 40).status_code == 200
    assert order(store, "state", "stop").status_code == 200
    assert order(lamp, "brightness", 300).status_code == 400
    assert order(lamp, "state", "maybe").status_code == 400
    wait_for(lambda: len(z2m.client.received("zigbee2mqtt/chambre_store/set")) == 2)
    assert z2m.client.received("zigbee2mqtt/chambre_lampe_chevet/set") == [{"state": "ON"}, {"brightness": 128}, {"color": {"x": 0.3, "y": 0.4}}]
    assert z2m.client.received("zigbee2mqtt/cuisine/spot/set") == [{"state": "OFF"}]
    assert z2m.client.received("zigbee2mqtt/chambre_store/set") == [{"position": 40}, {"state": "STOP"}]
    # The integration ignores what lands on /set (its own orders included): no state change.
    assert z2m.values("chambre_lampe_chevet").get("brightness") is None

    # Stopped: the order is refused at once, nothing is published.
    assert z2m.api.post("/integrations/zigbee2mqtt/stop").json()["status"] == "disconnected"
    assert order(lamp, "state", "off").status_code == 503
    assert z2m.api.post("/integrations/zigbee2mqtt/start").status_code == 200
    z2m.wait_status("connected")
    assert order(lamp, "state", "off").status_code == 200
    wait_for(lambda: z2m.client.received("zigbee2mqtt/chambre_lampe_chevet/set")[-1] == {"state": "OFF"})


def test_done_when_one_mqtt_message_reaches_a_websocket_as_device_equipment_then_zone_events(z2m):
    z2m.connect()
    z2m.discover()
    z2m.publish("chambre_lampe_chevet", {"state": "OFF", "brightness": 10})
    z2m.wait_value("chambre_lampe_chevet", "state", "OFF")
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet")
    root = z2m.root_zone_id()
    wait_for(lambda: z2m.api.get("/zones/aggregation").json()[root]["lightsTotal"] == 1)
    assert z2m.api.get("/zones/aggregation").json()[root]["lightsOn"] == 0

    ws = z2m.home.server.ws(z2m.home.admin_pair["accessToken"])
    expect_welcome(ws)
    collector = Collector(ws)
    try:
        subscribe(ws, "devices", "equipments", "zones")
        z2m.publish("chambre_lampe_chevet", {"state": "ON", "brightness": 10, "last_seen": "2026-04-19T10:00:00.000Z"})

        def chain(c: Collector):
            events = [e for m in c.messages() for e in events_in(m)]
            device = next((i for i, e in enumerate(events) if e["type"] == "device.data.updated" and e.get("key") == "state" and e.get("value") == "ON"), None)
            equipment = next((i for i, e in enumerate(events) if e["type"] == "equipment.data.changed" and e.get("equipmentId") == lamp["id"] and e.get("alias") == "state"), None)
            zone = next((i for i, e in enumerate(events) if e["type"] == "zone.data.changed" and e.get("zoneId") == root and e["aggregatedData"]["lightsOn"] == 1), None)
            return (device, equipment, zone) if None not in (device, equipment, zone) else None

        device_at, equipment_at, zone_at = collector.wait_for(chain, timeout=5)
        assert device_at < equipment_at < zone_at
        events = [e for m in collector.messages() for e in events_in(m)]
        assert events[equipment_at]["value"] == "ON" and events[equipment_at]["previous"] == "OFF"
        # zigbee2mqtt's last_seen (when it publishes one) is the source timestamp of the change.
        assert events[device_at]["sourceTimestamp"] == events[equipment_at]["sourceTimestamp"] == "2026-04-19T10:00:00.000Z"
    finally:
        collector.close()


def test_settings_change_restarts_on_the_new_base_topic(z2m):
    z2m.connect(base_topic="home/z2m")
    z2m.base = "home/z2m"
    z2m.discover()
    z2m.client.publish("zigbee2mqtt/salon_meteo", {"temperature": 5})  # the old base: ignored
    z2m.publish("salon_meteo", {"temperature": 22})
    z2m.wait_value("salon_meteo", "temperature", 22)
    assert z2m.integration()["settingValues"]["base_topic"] == "home/z2m"
    # Another settings change restarts it again (in the background), and it comes back connected.
    starts = z2m.home.server.output().count("connecting to broker")
    z2m.configure(mqtt_client_id="hausbox-test-id")
    wait_for(lambda: z2m.home.server.output().count("connecting to broker") > starts)
    z2m.wait_status("connected")
    z2m.publish("salon_meteo", {"temperature": 23})
    z2m.wait_value("salon_meteo", "temperature", 23)
    assert "connecting to broker 127.0.0.1:%d (base topic home/z2m)" % z2m.broker.port in z2m.home.server.output()
