"""The broker connection against a real mosquitto: restarts, a broker down at boot, credentials."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.broker import Broker, Mqtt
from tests.harness import Home
from tests.wsclient import Collector, expect_welcome
from tests.zigbee import MASK, Z2m


def system_events(collector: Collector) -> list[str]:
    return [e["type"] for e in collector.events() if e.get("type", "").startswith("system.integration.")]


def test_reconnects_by_itself_after_a_broker_restart(z2m):
    z2m.connect()
    z2m.discover()
    ws = z2m.home.server.ws(z2m.home.admin_pair["accessToken"])
    expect_welcome(ws)
    collector = Collector(ws)
    try:
        z2m.client.close()
        z2m.broker.restart()  # killed, then started again on the same port (retained messages lost)
        collector.wait_for(lambda c: system_events(c)[-2:] == ["system.integration.disconnected", "system.integration.connected"], timeout=15)
    finally:
        collector.close()
    assert z2m.integration()["status"] == "connected"
    # The devices are still known (no new device list after the restart): messages flow at once.
    z2m.client = Mqtt(z2m.broker)
    try:
        z2m.publish("cuisine/spot", {"state": "ON", "brightness": 99})
        z2m.wait_value("cuisine/spot", "brightness", 99)
    finally:
        z2m.client.close()


def test_a_broker_down_at_start_is_an_error_until_it_comes_up(make_server, tmp_path):
    broker = Broker(tmp_path / "mosquitto")  # not started
    server = make_server()
    z2m = Z2m(Home(server), broker, client=None)  # type: ignore[arg-type]
    z2m.configure()
    listed = z2m.wait_status("error")
    assert listed["error"] == f"cannot reach broker 127.0.0.1:{broker.port}: connection refused — retrying"
    # Across a server restart too: boot does not wait on the broker, and says why it is not connected.
    server.stop()
    server.start()
    listed = z2m.wait_status("error")
    assert "connection refused" in listed["error"]
    assert z2m.api.get("/health").json()["integrations"]["zigbee2mqtt"]["status"] == "error"
    broker.start()
    try:
        listed = z2m.wait_status("connected", timeout=15)
        assert "error" not in listed
        z2m.client = Mqtt(broker)
        z2m.discover()
        z2m.client.close()
    finally:
        broker.stop()


@pytest.fixture
def password_file() -> Iterator[Path]:
    """A mosquitto password file with user ``hub``. Started as root, mosquitto runs as its own user,
    which cannot enter pytest's private temporary folders: the file lives in a folder it can read."""
    folder = Path(tempfile.mkdtemp(prefix="hausbox-mqtt-auth-"))
    folder.chmod(0o755)
    path = folder / "passwords"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(path), "hub", "s3cret-pass"], check=True, capture_output=True)
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def test_username_and_password(make_server, tmp_path, password_file):
    broker = Broker(tmp_path / "mosquitto", password_file=password_file).start()
    try:
        z2m = Z2m(Home(make_server()), broker, client=None)  # type: ignore[arg-type]
        z2m.configure(mqtt_username="hub", mqtt_password="wrong")
        listed = z2m.wait_status("error")
        assert listed["error"].startswith(f"broker 127.0.0.1:{broker.port} refused the connection: ")
        assert "wrong" not in listed["error"] and listed["settingValues"]["mqtt_password"] == MASK
        z2m.configure(mqtt_password="s3cret-pass")
        z2m.wait_status("connected", timeout=10)
        z2m.client = Mqtt(broker, "hub", "s3cret-pass")
        try:
            z2m.discover()
            z2m.publish("salon_meteo", {"temperature": 18.5})
            z2m.wait_value("salon_meteo", "temperature", 18.5)
        finally:
            z2m.client.close()
        assert "s3cret-pass" not in z2m.home.server.output()
    finally:
        broker.stop()
