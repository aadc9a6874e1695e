"""MQTT publishers over the real server: zigbee2mqtt messages in on one real mosquitto, the publishers'
messages out on a real mosquitto, read back by a test client (live and retained)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.broker import Broker, Mqtt
from tests.harness import wait_for
from tests.zigbee import Z2m, created, zigbee_home

TOPIC = "house/out"
SETTLE_S = 0.6  # long enough for a message that should not come


def retained(broker: Broker, topic: str, timeout: float = 3.0) -> list[Any]:
    """What a client subscribing now receives on ``topic``: its retained message, if any."""
    client = Mqtt(broker)
    try:
        client.subscribe(topic)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not client.received(topic):
            time.sleep(0.02)
        time.sleep(0.1)
        return client.received(topic)
    finally:
        client.close()


def wait_broker(z2m: Z2m, broker_id: str, predicate, timeout: float = 10.0) -> dict[str, Any]:
    def check():
        listed = {b["id"]: b for b in z2m.api.get("/mqtt-brokers").json()}
        return listed[broker_id] if predicate(listed[broker_id]) else None

    return wait_for(check, timeout)


def add_broker(z2m: Z2m, broker: Broker, **extra: Any) -> dict[str, Any]:
    body = created(z2m.api.post("/mqtt-brokers", {"name": "Out", "url": broker.url, **extra}))
    wait_broker(z2m, body["id"], lambda b: b["connected"])
    return body


def add_publisher(z2m: Z2m, broker_id: str, topic: str = TOPIC, **extra: Any) -> dict[str, Any]:
    return created(z2m.api.post("/mqtt-publishers", {"name": f"P {topic}", "brokerId": broker_id, "topic": topic, **extra}))


def add_mapping(z2m: Z2m, publisher_id: str, key: str, source_type: str, source_id: str, source_key: str, **extra: Any) -> dict[str, Any]:
    body = {"publishKey": key, "sourceType": source_type, "sourceId": source_id, "sourceKey": source_key, **extra}
    return created(z2m.api.post(f"/mqtt-publishers/{publisher_id}/mappings", body))


def on_topic(client: Mqtt, topic: str, count: int, timeout: float = 5.0) -> list[Any]:
    got = wait_for(lambda: (lambda m: m if len(m) >= count else None)(client.received(topic)), timeout)
    time.sleep(SETTLE_S)
    return client.received(topic)


@pytest.fixture
def z2m(make_server, broker, mqtt_client) -> Z2m:
    return zigbee_home(make_server, broker, mqtt_client)


def test_one_device_message_gives_exactly_the_expected_retained_message(z2m: Z2m):
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    out = add_broker(z2m, z2m.broker)
    publisher = add_publisher(z2m, out["id"])
    add_mapping(z2m, publisher["id"], "temp", "equipment", meteo["id"], "temperature")
    add_mapping(z2m, publisher["id"], "hum", "equipment", meteo["id"], "humidity", enabled=False)
    z2m.client.subscribe(TOPIC)
    time.sleep(SETTLE_S)
    assert z2m.client.received(TOPIC) == []  # no value yet: the snapshots had nothing to send

    z2m.publish("salon_meteo", {"temperature": 21.5, "humidity": 48})
    assert on_topic(z2m.client, TOPIC, 1) == [{"temp": 21.5}]  # the disabled mapping sent nothing
    assert retained(z2m.broker, TOPIC) == [{"temp": 21.5}]


def test_values_are_converted_and_a_disabled_publisher_sends_nothing(z2m: Z2m):
    light = z2m.equipment("Plafonnier", "light_onoff", "salon_plafonnier")
    out = add_broker(z2m, z2m.broker)
    publisher = add_publisher(z2m, out["id"])
    add_mapping(z2m, publisher["id"], "light", "equipment", light["id"], "state")
    z2m.client.subscribe(TOPIC)
    z2m.publish("salon_plafonnier", {"state": "ON"})
    assert on_topic(z2m.client, TOPIC, 1) == [{"light": 1}]
    z2m.publish("salon_plafonnier", {"state": "OFF"})
    assert on_topic(z2m.client, TOPIC, 2) == [{"light": 1}, {"light": 0}]

    assert z2m.api.put(f"/mqtt-publishers/{publisher['id']}", {"enabled": False}).status_code == 200
    time.sleep(SETTLE_S)
    z2m.publish("salon_plafonnier", {"state": "ON"})
    z2m.wait_value("salon_plafonnier", "state", "ON")
    time.sleep(SETTLE_S)
    assert z2m.client.received(TOPIC) == [{"light": 1}, {"light": 0}]
    assert z2m.api.post(f"/mqtt-publishers/{publisher['id']}/test").json() == {"published": 0}


def test_on_change_only_skips_a_value_already_sent(z2m: Z2m):
    z2m.equipment("Meteo", "sensor", "salon_meteo")
    zone_id = z2m.root_zone_id()
    out = add_broker(z2m, z2m.broker)
    every = add_publisher(z2m, out["id"], "house/every")
    changes = add_publisher(z2m, out["id"], "house/changes", onChangeOnly=True)
    for publisher in (every, changes):
        add_mapping(z2m, publisher["id"], "t", "zone", zone_id, "temperature")
    z2m.client.subscribe("house/#")
    # The zone's data changes with the humidity too: the same temperature comes again in each event.
    z2m.publish("salon_meteo", {"temperature": 20.0, "humidity": 40})
    on_topic(z2m.client, "house/changes", 1)
    z2m.publish("salon_meteo", {"temperature": 20.0, "humidity": 41})
    z2m.wait_value("salon_meteo", "humidity", 41)
    z2m.publish("salon_meteo", {"temperature": 20.5, "humidity": 42})
    on_topic(z2m.client, "house/changes", 2)
    assert z2m.client.received("house/changes") == [{"t": 20.0}, {"t": 20.5}]
    every_got = z2m.client.received("house/every")
    assert every_got[-1] == {"t": 20.5} and every_got.count({"t": 20.0}) >= 2


def test_a_configuration_change_publishes_a_snapshot_and_test_counts_enabled_mappings(z2m: Z2m):
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    z2m.publish("salon_meteo", {"temperature": 19.0, "humidity": 55})
    z2m.wait_value("salon_meteo", "humidity", 55)
    out = add_broker(z2m, z2m.broker)
    publisher = add_publisher(z2m, out["id"], "house/a")
    z2m.client.subscribe("house/#")
    add_mapping(z2m, publisher["id"], "temp", "equipment", meteo["id"], "temperature")
    assert on_topic(z2m.client, "house/a", 1) == [{"temp": 19.0}]  # the snapshot after the mapping was added
    hum = add_mapping(z2m, publisher["id"], "hum", "equipment", meteo["id"], "humidity", enabled=False)
    time.sleep(SETTLE_S)
    assert z2m.client.received("house/a") == [{"temp": 19.0}, {"temp": 19.0}]  # the snapshot skips the off mapping

    assert z2m.api.put(f"/mqtt-publishers/{publisher['id']}", {"topic": "house/b"}).status_code == 200
    assert on_topic(z2m.client, "house/b", 1) == [{"temp": 19.0}]
    assert retained(z2m.broker, "house/b") == [{"temp": 19.0}]

    assert z2m.api.post(f"/mqtt-publishers/{publisher['id']}/test").json() == {"published": 1}
    response = z2m.api.put(f"/mqtt-publishers/{publisher['id']}/mappings/{hum['id']}", {"enabled": True})
    assert response.status_code == 200 and response.json()["enabled"] is True
    assert z2m.api.post(f"/mqtt-publishers/{publisher['id']}/test").json() == {"published": 2}
    got = on_topic(z2m.client, "house/b", 6)
    assert got[-2:] == [{"temp": 19.0}, {"hum": 55}]
    listed = z2m.api.get(f"/mqtt-publishers/{publisher['id']}").json()
    assert [(m["publishKey"], m["enabled"]) for m in listed["mappings"]] == [("temp", True), ("hum", True)]


def test_broker_loss_and_return_reconnects_and_publishes_the_snapshot_again(z2m: Z2m, tmp_path):
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    z2m.publish("salon_meteo", {"temperature": 17.5})
    z2m.wait_value("salon_meteo", "temperature", 17.5)
    target = Broker(tmp_path / "target").start()
    try:
        out = add_broker(z2m, target)
        publisher = add_publisher(z2m, out["id"])
        add_mapping(z2m, publisher["id"], "temp", "equipment", meteo["id"], "temperature")
        wait_for(lambda: retained(target, TOPIC, 0.5) == [{"temp": 17.5}], 5)

        target.stop()  # killed: its retained messages are gone with it
        down = wait_broker(z2m, out["id"], lambda b: not b["connected"] and b["lastError"])
        assert down["status"] in ("disconnected", "error")
        z2m.publish("salon_meteo", {"temperature": 18.0})  # while away: not published, not lost
        z2m.wait_value("salon_meteo", "temperature", 18.0)
        target.start()
        wait_broker(z2m, out["id"], lambda b: b["connected"], timeout=40)
        assert wait_for(lambda: retained(target, TOPIC, 0.5) == [{"temp": 18.0}], 5)
    finally:
        target.stop()


def test_conflicts_missing_ids_and_bad_input(z2m: Z2m):
    api = z2m.api
    out = created(api.post("/mqtt-brokers", {"name": "Out", "url": z2m.broker.url}))
    publisher = add_publisher(z2m, out["id"])
    response = api.delete(f"/mqtt-brokers/{out['id']}")
    assert response.status_code == 409
    assert publisher["name"] in response.json()["error"]
    assert response.json()["publishers"] == [{"id": publisher["id"], "name": publisher["name"]}]

    add_mapping(z2m, publisher["id"], "k", "zone", z2m.root_zone_id(), "temperature")
    other = add_mapping(z2m, publisher["id"], "k2", "zone", z2m.root_zone_id(), "humidity")
    duplicate = {"publishKey": "k", "sourceType": "zone", "sourceId": "x", "sourceKey": "y"}
    assert api.post(f"/mqtt-publishers/{publisher['id']}/mappings", duplicate).status_code == 409
    assert api.put(f"/mqtt-publishers/{publisher['id']}/mappings/{other['id']}", {"publishKey": "k"}).status_code == 409

    missing = "00000000-0000-4000-8000-00000000dead"
    for method, path, body in [
        ("PUT", f"/mqtt-brokers/{missing}", {"name": "x"}),
        ("DELETE", f"/mqtt-brokers/{missing}", None),
        ("GET", f"/mqtt-publishers/{missing}", None),
        ("POST", f"/mqtt-publishers/{missing}/test", None),
        ("PUT", f"/mqtt-publishers/{publisher['id']}/mappings/{missing}", {"enabled": False}),
        ("DELETE", f"/mqtt-publishers/{publisher['id']}/mappings/{missing}", None),
    ]:
        response = api.request(method, path, body)
        assert response.status_code == 404 and response.json()["error"], (method, path, response.text)
    for path, body in [
        ("/mqtt-brokers", {"name": "Bad", "url": "http://host"}),
        ("/mqtt-brokers", {"name": "Bad", "url": "mqtt://host:99999"}),
        ("/mqtt-publishers", {"name": "P", "brokerId": missing, "topic": "a"}),
        ("/mqtt-publishers", {"name": "P", "brokerId": out["id"], "topic": "a/#"}),
        (f"/mqtt-publishers/{publisher['id']}/mappings", {**duplicate, "publishKey": "n", "sourceType": "device"}),
    ]:
        response = api.post(path, body)
        assert response.status_code == 400 and response.json()["error"], (path, response.text)

    assert api.delete(f"/mqtt-publishers/{publisher['id']}").status_code == 204
    assert api.delete(f"/mqtt-brokers/{out['id']}").status_code == 204
    assert api.get("/mqtt-brokers").json() == []


@pytest.fixture
def password_file() -> Iterator[Path]:
    """A mosquitto password file (user ``pub``) in a folder mosquitto's own user can read."""
    folder = Path(tempfile.mkdtemp(prefix="hausbox-pub-auth-"))
    folder.chmod(0o755)
    path = folder / "passwords"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(path), "pub", PASSWORD], check=True, capture_output=True)
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


PASSWORD = "Br0ker-s3cret-xyz"


def test_credentials_reach_admins_only_and_never_the_logs_or_websocket(z2m: Z2m, tmp_path, password_file):
    target = Broker(tmp_path / "auth", password_file=password_file).start()
    try:
        ws = z2m.home.server.ws(z2m.api.token)
        ws.recv()  # welcome
        ws.send(json.dumps({"type": "subscribe", "topics": ["mqtt-publishers"]}))
        time.sleep(0.2)
        out = created(z2m.api.post("/mqtt-brokers", {"name": "Auth", "url": target.url, "username": "pub", "password": "wrong-pw-123"}))
        refused = wait_broker(z2m, out["id"], lambda b: b["status"] == "error")
        assert "refused" in refused["lastError"] and "wrong-pw-123" not in refused["lastError"]
        assert z2m.api.put(f"/mqtt-brokers/{out['id']}", {"password": PASSWORD}).status_code == 200
        listed = wait_broker(z2m, out["id"], lambda b: b["connected"])
        assert (listed["username"], listed["password"], listed["lastError"]) == ("pub", PASSWORD, None)

        meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
        publisher = add_publisher(z2m, out["id"])
        add_mapping(z2m, publisher["id"], "temp", "equipment", meteo["id"], "temperature")
        z2m.publish("salon_meteo", {"temperature": 22.0})
        client = Mqtt(target, "pub", PASSWORD)
        try:
            assert wait_for(lambda: (lambda got: got == [{"temp": 22.0}] and got)(_retained_with(client, TOPIC)), 5)
        finally:
            client.close()

        events = []
        ws.settimeout(1)
        try:
            while True:
                events.append(ws.recv())
        except Exception:  # noqa: BLE001 - no more frames
            pass
        ws.close()
        text = "".join(events)
        assert "mqtt-broker.created" in text and "mqtt-broker.updated" in text
        assert PASSWORD not in text and "wrong-pw-123" not in text

        _, standard = z2m.home.new_user("standard")
        assert standard.get("/mqtt-brokers").status_code == 403
        assert standard.get("/mqtt-brokers").json() == {"error": "Admin access required"}
        publishers = standard.get("/mqtt-publishers")
        assert publishers.status_code == 200 and PASSWORD not in publishers.text
        logs = z2m.api.get("/logs?limit=1000")
        assert logs.status_code == 200 and "MQTT broker Auth created" in logs.text
        for secret in (PASSWORD, "wrong-pw-123"):
            assert secret not in logs.text
            assert secret not in z2m.home.server.output()
            for path in (z2m.home.server.data_dir / "logs").glob("*"):
                assert secret not in path.read_text(errors="replace"), path
    finally:
        target.stop()


def _retained_with(client: Mqtt, topic: str) -> list[Any]:
    if not client.received(topic):
        client.subscribe(topic)
        time.sleep(0.1)
    return client.received(topic)


def test_shadow_mode_connects_no_broker_and_publishes_nothing(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client, env={"SERVICE_SHADOW_MODE": "1"})
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    out = created(z2m.api.post("/mqtt-brokers", {"name": "Out", "url": broker.url}))
    publisher = add_publisher(z2m, out["id"])
    add_mapping(z2m, publisher["id"], "temp", "equipment", meteo["id"], "temperature")
    z2m.client.subscribe(TOPIC)
    z2m.publish("salon_meteo", {"temperature": 23.0})
    z2m.wait_value("salon_meteo", "temperature", 23.0)
    time.sleep(SETTLE_S)
    assert z2m.client.received(TOPIC) == []
    assert z2m.api.post(f"/mqtt-publishers/{publisher['id']}/test").json() == {"published": 0}
    listed = z2m.api.get("/mqtt-brokers").json()[0]
    assert (listed["status"], listed["connected"]) == ("held", False)
