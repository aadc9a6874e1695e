"""The bench's own MQTT client: the broker's dropped-message counter and the orders the service sends."""

from __future__ import annotations

import threading
import time

import paho.mqtt.client as mqtt

DROPPED = "$SYS/broker/publish/messages/dropped"


class Monitor:
    def __init__(self, port: int, base: str):
        self.base = base
        self._lock = threading.Condition()
        self.dropped_value: int | None = None
        self.dropped_at = 0.0
        self.orders: list[tuple[float, str, bytes]] = []  # (receipt time, topic, payload)
        self._connected = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-monitor", clean_session=True)
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        client.connect("127.0.0.1", port, keepalive=60)
        client.loop_start()
        if not self._connected.wait(10):
            raise RuntimeError("monitor: no CONNACK from the broker")
        self.client = client

    def _on_connect(self, client, _userdata, _flags, _reason, _properties) -> None:  # noqa: ANN001
        client.subscribe([(DROPPED, 0), (f"{self.base}/+/set", 0)])
        self._connected.set()

    def _on_message(self, _client, _userdata, message) -> None:  # noqa: ANN001
        t = time.monotonic()
        with self._lock:
            if message.topic == DROPPED:
                try:
                    self.dropped_value = int(message.payload)
                    self.dropped_at = t
                except ValueError:
                    pass
            else:
                self.orders.append((t, message.topic, message.payload))
            self._lock.notify_all()

    def dropped(self, fresher_than: float | None = None, timeout: float = 3.0) -> int | None:
        """The broker's count of dropped publishes; with ``fresher_than``, a value reported after it."""
        with self._lock:
            if fresher_than is not None:
                self._lock.wait_for(lambda: self.dropped_at > fresher_than, timeout)
            return self.dropped_value

    def order_count(self) -> int:
        with self._lock:
            return len(self.orders)

    def wait_order(self, after_index: int, topic: str, timeout: float) -> float | None:
        """Receipt time of the first order on ``topic`` at or after ``after_index``; None on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for t, got, _payload in self.orders[after_index:]:
                    if got == topic:
                        return t
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(left)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
