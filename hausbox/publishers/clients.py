"""One MQTT client per broker, for the publishers: connected, reconnecting by itself, its state shown.

Each client is the zigbee2mqtt integration's connection (paho-mqtt 2.x in its own greenlets,
TCP_NODELAY, clean sessions, reconnection with a 1 to 30 s backoff), subscribed to nothing. The
clients are made, replaced and closed only from the publishers' worker (``reconcile``), which the
outbound gate holds: in shadow mode no client connects, so a copy of production never takes the
production box's client id on its brokers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import paho.mqtt.client as mqtt

from hausbox.core.urls import mask_credentials
from hausbox.integrations.builtin.zigbee2mqtt.connection import MqttConnection, parse_broker_url

log = logging.getLogger("hausbox.publishers")

CLIENT_ID_PREFIX = "hausbox-publisher-"


class PublisherConnection(MqttConnection):
    """The integration's connection, plus retained publishing without waiting (QoS 0)."""

    def publish_retained(self, topic: str, payload: str) -> bool:
        """Hand one retained message to the client; False when not connected or refused."""
        if not self.connected:
            return False
        return self._client.publish(topic, payload, qos=0, retain=True).rc == mqtt.MQTT_ERR_SUCCESS


@dataclass(frozen=True)
class Target:
    """What a broker's client is made from: a change of any of it makes a new client."""

    url: str
    username: str | None
    password: str | None


@dataclass
class ClientState:
    status: str = "connecting"  # connecting, connected, disconnected, error
    last_error: str | None = None
    connections: int = 0  # how many times the broker accepted the client


class BrokerClients:
    """The clients of every broker, by broker id; ``on_connected(broker_id)`` after each connect."""

    def __init__(self, on_connected: Callable[[str], None]):
        self._on_connected = on_connected
        self._clients: dict[str, tuple[Target, PublisherConnection, ClientState]] = {}

    # ---- reads (any greenlet) ------------------------------------------------------------------
    def state(self, broker_id: str) -> ClientState | None:
        entry = self._clients.get(broker_id)
        return entry[2] if entry else None

    def connected(self, broker_id: str) -> bool:
        entry = self._clients.get(broker_id)
        return entry is not None and entry[1].connected

    # ---- the worker's ------------------------------------------------------------------------
    def reconcile(self, wanted: dict[str, Target]) -> None:
        """Make the running clients exactly ``wanted``: close the ones gone or changed, start the new."""
        for broker_id, (target, connection, _state) in list(self._clients.items()):
            if wanted.get(broker_id) != target:
                del self._clients[broker_id]
                connection.stop()
                log.info("publisher client of broker %s closed", broker_id)
        for broker_id, target in wanted.items():
            if broker_id not in self._clients:
                self._start(broker_id, target)

    def _start(self, broker_id: str, target: Target) -> None:
        state = ClientState()
        try:
            address = parse_broker_url(target.url)
        except ValueError as error:  # checked when written; a row edited by hand lands here
            state.status, state.last_error = "error", mask_credentials(str(error))
            self._clients[broker_id] = (target, _Unstarted(), state)  # type: ignore[arg-type]
            return
        username = target.username or address.username
        password = target.password if target.username else address.password
        connection = PublisherConnection(
            address,
            client_id=CLIENT_ID_PREFIX + broker_id[:8],
            subscriptions=[],
            on_message=lambda _topic, _payload: None,
            on_status=lambda status, detail: self._status(broker_id, connection, status, detail),
            logger=log,
            username=username,
            password=password if username else None,
        )
        self._clients[broker_id] = (target, connection, state)
        log.info("publisher client of broker %s connecting to %s", broker_id, address.label)
        connection.start()

    def _status(self, broker_id: str, connection: PublisherConnection, status: str, detail: str | None) -> None:
        entry = self._clients.get(broker_id)
        if entry is None or entry[1] is not connection:
            return  # a client already replaced
        state = entry[2]
        was = state.status
        state.status = status
        if status == "connected":
            state.connections += 1
            log.info("publisher client of broker %s connected", broker_id)
            self._on_connected(broker_id)
            return
        state.last_error = detail
        if was != status or status == "error":
            log.warning("publisher client of broker %s: %s", broker_id, detail)

    def publish(self, broker_id: str, topic: str, payload: str) -> bool:
        entry = self._clients.get(broker_id)
        return entry is not None and entry[1].publish_retained(topic, payload)

    def close_all(self) -> None:
        self.reconcile({})


class _Unstarted:
    """The place of a client that could not be made (its URL does not parse)."""

    connected = False

    def publish_retained(self, _topic: str, _payload: str) -> bool:
        return False

    def stop(self) -> None:
        pass
