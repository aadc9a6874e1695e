"""A real mosquitto broker on a loopback port, started and stopped by the tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tests.harness import free_port

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


class Broker:
    def __init__(self, workdir: Path, password_file: Path | None = None):
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.password_file = password_file
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> "Broker":
        config = self.workdir / "mosquitto.conf"
        lines = [f"listener {self.port} 127.0.0.1", "persistence false", "log_dest stderr", "log_type error", "log_type warning"]
        if self.password_file:
            lines += ["allow_anonymous false", f"password_file {self.password_file}"]
        else:
            lines.append("allow_anonymous true")
        config.write_text("\n".join(lines) + "\n")
        log = open(self.workdir / "mosquitto.log", "ab")
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(config)], stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                import socket

                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"mosquitto exited: {(self.workdir / 'mosquitto.log').read_text()}")
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> "Broker":
        self.stop()
        return self.start()


class Mqtt:
    """A test-side MQTT client: publish messages, and record what arrives on subscribed topics."""

    def __init__(self, broker: Broker, username: str | None = None, password: str | None = None):
        self.messages: list[tuple[str, bytes]] = []
        self.arrived_at: list[float] = []  # wall time of each of ``messages``
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        if username:
            self.client.username_pw_set(username, password)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()

    def _on_message(self, _client: Any, _userdata: Any, message: Any) -> None:
        self.arrived_at.append(time.time())
        self.messages.append((message.topic, message.payload))

    def arrivals(self, topic: str) -> list[tuple[float, Any]]:
        """``(wall time, payload)`` of every message received on ``topic``."""
        return [(at, _decoded(payload)) for at, (t, payload) in zip(list(self.arrived_at), list(self.messages)) if t == topic]

    def publish(self, topic: str, payload: Any, retain: bool = False) -> None:
        data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
        self.client.publish(topic, data, qos=1, retain=retain).wait_for_publish(5)

    def subscribe(self, topic: str) -> None:
        self.client.subscribe(topic, qos=1)
        time.sleep(0.1)

    def received(self, topic: str) -> list[Any]:
        return [_decoded(payload) for t, payload in list(self.messages) if t == topic]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _decoded(payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        return payload.decode(errors="replace")
