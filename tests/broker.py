"""A real mosquitto broker on a loopback port (tools/benchlib/mosquitto.py), and a test-side MQTT client."""

from __future__ import annotations

import json
import time
from typing import Any

import paho.mqtt.client as mqtt

from tools.benchlib.mosquitto import Mosquitto

# The benchmark starts its broker the same way: one start-up for both.
Broker = Mosquitto


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
