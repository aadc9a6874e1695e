"""The broker connection's reader against a real mosquitto, plain and over TLS: every message of a
burst arrives whole and in order whatever the read boundaries (packets many to a read, split across
reads, larger than one read), and an order sent meanwhile is acknowledged.

The connection runs in a process of its own, monkey-patched by gevent as the service is, so paho's
sockets and locks are the ones the service has.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import paho.mqtt.client as mqtt
import pytest

from hausbox.integrations.builtin.zigbee2mqtt import connection
from tests.broker import Broker

ROOT = Path(__file__).resolve().parents[3]

READER = r"""
from gevent import monkey

monkey.patch_all()

import hashlib, json, logging, sys, time

import gevent
from gevent.event import Event

from hausbox.integrations.builtin.zigbee2mqtt.connection import MqttConnection, parse_broker_url

received, ended, statuses = [], Event(), []
order = {}


def send_order():
    started = time.monotonic()
    conn.publish("burst/order/set", json.dumps({"state": "ON"}), qos=1)  # raises unless acknowledged
    order["seconds"] = time.monotonic() - started


def on_message(topic, payload):
    received.append((topic, hashlib.sha256(payload).hexdigest(), len(payload)))
    if len(received) == 10:
        gevent.spawn(send_order)  # while the burst is being read
    if topic == "burst/end":
        ended.set()


conn = MqttConnection(parse_broker_url(sys.argv[1]), "reader-test", ["burst/#"], on_message, lambda status, _detail: statuses.append(status), logging.getLogger("reader"))
conn.start()
deadline = time.monotonic() + 10
while not conn.connected and time.monotonic() < deadline:
    gevent.sleep(0.02)
print("connected" if conn.connected else f"not connected: {statuses}", flush=True)
ended.wait(60)
gevent.sleep(0.5)  # the order's acknowledgement
conn.stop()
print(json.dumps({"received": received, "order": order}), flush=True)
"""


def burst() -> list[tuple[str, bytes]]:
    """Sizes that put packet boundaries everywhere in a read: small ones by the hundred, some
    around a read's size, two larger than a read, and the end marker."""
    messages = []
    for i in range(3000):
        size = 40 + (i * 7919) % 900
        if i % 500 == 250:
            size = connection.RECV_SIZE - 3 + i % 7
        if i in (1000, 2200):
            size = 3 * connection.RECV_SIZE + 17
        body = json.dumps({"seq": i, "pad": "x" * size}).encode()
        messages.append((f"burst/device_{i % 37}", body))
    messages.append(("burst/end", b"{}"))
    return messages


def read_burst(broker: Broker, url: str, env: dict[str, str], tls: dict[str, str] | None = None) -> dict:
    reader = subprocess.Popen([sys.executable, "-c", READER, url], cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "connected", reader.stderr.read() if reader.poll() is not None else "not connected"
        publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        publisher.max_queued_messages_set(0)
        if tls:
            publisher.tls_set(ca_certs=tls["ca"])
        publisher.connect("127.0.0.1", broker.port)
        publisher.loop_start()
        messages = burst()
        try:
            infos = [publisher.publish(topic, body, qos=1) for topic, body in messages]
            for info in infos:
                info.wait_for_publish(30)
        finally:
            publisher.loop_stop()
            publisher.disconnect()
        out, err = reader.communicate(timeout=90)
    finally:
        if reader.poll() is None:
            reader.kill()
    assert reader.returncode == 0, err
    got = json.loads(out.strip().splitlines()[-1])
    sent = [[topic, hashlib.sha256(body).hexdigest(), len(body)] for topic, body in messages]
    received = [m for m in got["received"] if m[0] != "burst/order/set"]
    assert len(received) == len(sent)
    assert received == sent  # whole, and in the broker's order
    assert got["order"]["seconds"] < 2.0
    return got


@pytest.fixture
def certificates() -> Iterator[dict[str, str]]:
    """A self-signed certificate for 127.0.0.1, in a folder mosquitto's own user can read."""
    folder = Path(tempfile.mkdtemp(prefix="hausbox-mqtt-tls-"))
    folder.chmod(0o755)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    key.chmod(0o644)
    yield {"ca": str(cert), "cert": str(cert), "key": str(key)}
    shutil.rmtree(folder, ignore_errors=True)


def test_a_burst_read_many_packets_at_a_time_arrives_whole_and_in_order(tmp_path):
    broker = Broker(tmp_path / "mosquitto", extra_config=("max_queued_messages 10000",)).start()
    try:
        read_burst(broker, broker.url, {})
    finally:
        broker.stop()


def test_a_burst_over_tls_arrives_whole_and_in_order(tmp_path, certificates):
    config = ("max_queued_messages 10000", f"certfile {certificates['cert']}", f"keyfile {certificates['key']}")
    broker = Broker(tmp_path / "mosquitto", extra_config=config).start()
    try:
        # The service checks the broker against the system's authorities: here, this certificate.
        read_burst(broker, f"mqtts://127.0.0.1:{broker.port}", {"SSL_CERT_FILE": certificates["ca"]}, certificates)
    finally:
        broker.stop()
