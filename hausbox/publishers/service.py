"""MQTT brokers and publishers: configuration, the in-memory index, and the publishing worker.

- Configuration (admin) is written through to the database and kept in memory. A broker's password
  is shown only in an administrator's ``GET /mqtt-brokers``: events carry the public form (no
  password, the URL's credentials masked), and every password is handed to the log redactor.
- The bus side is in memory only: ``equipment.data.changed``, ``zone.data.changed`` and
  ``recipe.instance.state.changed`` are looked up in an index (source type, source id) -> the
  enabled mappings of enabled publishers, and what matches is queued on the ``publishers`` worker
  as outbound jobs (held in shadow mode). The worker converts and publishes.
- Publishing (digest §15): one retained QoS 0 message per mapping on the publisher's topic,
  ``{"<publishKey>": value}``; true, "ON", "open" -> 1 and false, "OFF", "closed" -> 0. A value
  that resolves to nothing (no such key, or null) is not published. ``onChangeOnly`` skips a
  message identical to the last one handed to that broker for that topic and key (snapshots update
  the same cache).
- Snapshots (every enabled mapping's current value, whatever ``onChangeOnly``): of a broker's
  publishers each time its client connects (the first time, and after a broker came back: a
  restarted broker may have lost its retained messages), and of a publisher after any change to it
  or its mappings. ``test`` publishes one at once and says how many messages went out.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from gevent.event import AsyncResult
from gevent.timeout import Timeout
from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.core.jsonenc import dumps_text
from hausbox.core.logs import by_actor
from hausbox.core.urls import mask_credentials
from hausbox.core.workers import Worker
from hausbox.integrations.builtin.zigbee2mqtt.connection import parse_broker_url
from hausbox.publishers.clients import BrokerClients, Target

log = logging.getLogger("hausbox.publishers")

SOURCE_TYPES = ("equipment", "zone", "recipe")
NAME_MAX, URL_MAX, TOPIC_MAX, KEY_MAX, CREDENTIAL_MAX = 100, 500, 500, 200, 500
TEST_TIMEOUT_S = 10.0
_MISSING = object()
_ONE, _ZERO = ("ON", "open"), ("OFF", "closed")


def convert(value: Any) -> Any:
    """The digest's conversion: true, "ON", "open" -> 1; false, "OFF", "closed" -> 0; the rest as is."""
    if value is True or (isinstance(value, str) and value in _ONE):
        return 1
    if value is False or (isinstance(value, str) and value in _ZERO):
        return 0
    return value


@dataclass
class Broker:
    id: str
    name: str
    url: str
    username: str | None
    password: str | None
    created_at: int
    updated_at: int

    @property
    def target(self) -> Target:
        return Target(self.url, self.username, self.password)


@dataclass
class MappingRow:
    id: str
    publisher_id: str
    publish_key: str
    source_type: str
    source_id: str
    source_key: str
    enabled: bool
    created_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "publisherId": self.publisher_id,
            "publishKey": self.publish_key,
            "sourceType": self.source_type,
            "sourceId": self.source_id,
            "sourceKey": self.source_key,
            "enabled": self.enabled,
            "createdAt": iso_utc(self.created_at),
        }


@dataclass
class Publisher:
    id: str
    name: str
    broker_id: str
    topic: str
    enabled: bool
    on_change_only: bool
    created_at: int
    updated_at: int
    mappings: dict[str, MappingRow] = field(default_factory=dict)

    def ordered_mappings(self) -> list[MappingRow]:
        return sorted(self.mappings.values(), key=lambda m: (m.created_at, m.id))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "brokerId": self.broker_id,
            "topic": self.topic,
            "enabled": self.enabled,
            "onChangeOnly": self.on_change_only,
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
            "mappings": [m.to_json() for m in self.ordered_mappings()],
        }


# One publication the bus side decided: (broker id, topic, publish key, raw value, onChangeOnly).
Item = tuple[str, str, str, Any, bool]


class Sources:
    """Current values of the three source types, read from the views in memory."""

    def __init__(self, equipments: Any, aggregator: Any, recipe_state: Callable[[str], Mapping[str, Any] | None]):
        self._equipments = equipments
        self._aggregator = aggregator
        self._recipe_state = recipe_state

    def values_of(self, source_type: str, source_id: str) -> Mapping[str, Any] | None:
        if source_type == "equipment":
            equipment = self._equipments.get(source_id)
            return equipment.data if equipment is not None else None
        if source_type == "zone":
            return self._aggregator.data(source_id)
        return self._recipe_state(source_id)


class PublisherService:
    def __init__(self, db: orm.Database, bus: EventBus, clock: Clock, worker: Worker, sources: Sources, add_secret: Callable[[str], None]):
        self._db = db
        self._bus = bus
        self._clock = clock
        self._worker = worker
        self._sources = sources
        self._add_secret = add_secret
        self._brokers: dict[str, Broker] = {}
        self._publishers: dict[str, Publisher] = {}
        self._index: dict[tuple[str, str], list[tuple[Publisher, MappingRow]]] = {}
        self._last_sent: dict[tuple[str, str, str], str] = {}  # (broker, topic, key) -> payload
        self.clients = BrokerClients(on_connected=lambda broker_id: self._worker.submit_outbound(self._snapshot_broker, broker_id))
        self._running = False
        self._load()
        bus.on("equipment.data.changed", self._on_equipment)
        bus.on("zone.data.changed", self._on_zone)
        bus.on("recipe.instance.state.changed", self._on_recipe)

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.MqttBroker.select():
                self._brokers[row.id] = Broker(row.id, row.name, row.url, row.username or None, row.password or None, row.created_at, row.updated_at)
            for row in self._db.MqttPublisher.select():
                self._publishers[row.id] = Publisher(row.id, row.name, row.broker_id, row.topic, row.enabled, row.on_change_only, row.created_at, row.updated_at)
            for row in self._db.MqttPublisherMapping.select():
                publisher = self._publishers.get(row.publisher_id)
                if publisher is not None:
                    publisher.mappings[row.id] = MappingRow(
                        row.id, row.publisher_id, row.publish_key, row.source_type, row.source_id, row.source_key, row.enabled, row.created_at
                    )
        for broker in self._brokers.values():
            self._note_secrets(broker)
        self._reindex()

    # ---- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect every broker (through the worker: held in shadow mode)."""
        self._running = True
        if self._worker.held_off:
            log.info("MQTT publishers held off (outbound gate closed): no broker is connected")
        self._reconcile()

    def stop(self) -> None:
        self._running = False

    def disconnect(self) -> None:
        """Close every client (after the workers drained: what was queued went out)."""
        self.clients.close_all()

    def _reconcile(self) -> None:
        if self._running:
            self._worker.submit_outbound(self._apply_clients)

    def _apply_clients(self) -> None:
        self.clients.reconcile({b.id: b.target for b in self._brokers.values()} if self._running else {})

    # ---- brokers ---------------------------------------------------------------------------------
    def broker(self, broker_id: str) -> Broker:
        broker = self._brokers.get(broker_id)
        if broker is None:
            raise NotFound(f"MQTT broker not found: {broker_id}")
        return broker

    def broker_json(self, broker: Broker) -> dict[str, Any]:
        """An administrator's view: the credentials as stored, and the client's state."""
        body = self.broker_event_json(broker)
        body["url"] = broker.url
        if broker.password:
            body["password"] = broker.password
        return body

    def broker_event_json(self, broker: Broker) -> dict[str, Any]:
        """What events carry: no password, the URL's credentials masked."""
        state = self.clients.state(broker.id)
        if state is not None:
            status, last_error = state.status, state.last_error
        else:
            status, last_error = ("held" if self._worker.held_off else "disconnected"), None
        body: dict[str, Any] = {"id": broker.id, "name": broker.name, "url": mask_credentials(broker.url)}
        if broker.username:
            body["username"] = broker.username
        body.update(
            createdAt=iso_utc(broker.created_at), updatedAt=iso_utc(broker.updated_at),
            status=status, connected=self.clients.connected(broker.id), lastError=last_error,
        )  # fmt: skip
        return body

    def brokers_json(self) -> list[dict[str, Any]]:
        return [self.broker_json(b) for b in sorted(self._brokers.values(), key=lambda b: (b.name.lower(), b.id))]

    def create_broker(self, fields: Mapping[str, Any], actor: str | None = None) -> dict[str, Any]:
        stamp = self._clock.now_ms()
        broker = Broker(str(uuid.uuid4()), "", "", None, None, stamp, stamp)
        self._apply_broker_fields(broker, fields)
        with orm.db_session:
            self._db.MqttBroker(
                id=broker.id, name=broker.name, url=broker.url, username=broker.username, password=broker.password, created_at=stamp, updated_at=stamp
            )
        self._brokers[broker.id] = broker
        self._note_secrets(broker)
        log.info("MQTT broker %s created (%s)%s", broker.name, mask_credentials(broker.url), by_actor(actor))
        self._bus.emit("mqtt-broker.created", broker=self.broker_event_json(broker))
        self._reconcile()
        return self.broker_json(broker)

    def update_broker(self, broker_id: str, fields: Mapping[str, Any], actor: str | None = None) -> dict[str, Any]:
        broker = self.broker(broker_id)
        changed = Broker(**{**broker.__dict__})
        self._apply_broker_fields(changed, fields)
        changed.updated_at = self._clock.now_ms()
        with orm.db_session:
            self._db.MqttBroker[broker_id].set(
                name=changed.name, url=changed.url, username=changed.username, password=changed.password, updated_at=changed.updated_at
            )
        self._brokers[broker_id] = changed
        self._note_secrets(changed)
        log.info("MQTT broker %s updated%s", changed.name, by_actor(actor))
        self._bus.emit("mqtt-broker.updated", broker=self.broker_event_json(changed))
        self._reconcile()  # a new URL or new credentials: a new client, whose connect brings a snapshot
        return self.broker_json(changed)

    def delete_broker(self, broker_id: str, actor: str | None = None) -> None:
        broker = self.broker(broker_id)
        users = sorted((p for p in self._publishers.values() if p.broker_id == broker_id), key=lambda p: (p.name.lower(), p.id))
        if users:
            names = ", ".join(p.name for p in users)
            raise Conflict(
                f"MQTT broker {broker.name} is used by publishers: {names}", publishers=[{"id": p.id, "name": p.name} for p in users]
            )
        with orm.db_session:
            self._db.MqttBroker[broker_id].delete()
        del self._brokers[broker_id]
        log.info("MQTT broker %s deleted%s", broker.name, by_actor(actor))
        self._bus.emit("mqtt-broker.removed", brokerId=broker_id)
        self._reconcile()

    @staticmethod
    def _apply_broker_fields(broker: Broker, fields: Mapping[str, Any]) -> None:
        if "name" in fields:
            broker.name = fields["name"].strip()
        if "url" in fields:
            url = fields["url"].strip()
            try:
                parse_broker_url(url)
            except ValueError as error:
                raise BadRequest(f"url: {mask_credentials(str(error))}") from None
            broker.url = url
        for name in ("username", "password"):
            if name in fields:
                setattr(broker, name, fields[name] or None)  # null or "" clears it

    def _note_secrets(self, broker: Broker) -> None:
        """Every password of a broker goes to the log redactor, the URL's too."""
        if broker.password:
            self._add_secret(broker.password)
        try:
            in_url = parse_broker_url(broker.url).password
        except ValueError:
            in_url = None
        if in_url:
            self._add_secret(in_url)

    # ---- publishers ------------------------------------------------------------------------------
    def publisher(self, publisher_id: str) -> Publisher:
        publisher = self._publishers.get(publisher_id)
        if publisher is None:
            raise NotFound(f"MQTT publisher not found: {publisher_id}")
        return publisher

    def publishers_json(self) -> list[dict[str, Any]]:
        return [p.to_json() for p in sorted(self._publishers.values(), key=lambda p: (p.name.lower(), p.id))]

    def create_publisher(self, fields: Mapping[str, Any], actor: str | None = None) -> dict[str, Any]:
        stamp = self._clock.now_ms()
        publisher = Publisher(str(uuid.uuid4()), "", "", "", True, False, stamp, stamp)
        self._apply_publisher_fields(publisher, fields)
        with orm.db_session:
            self._db.MqttPublisher(
                id=publisher.id, name=publisher.name, broker_id=publisher.broker_id, topic=publisher.topic,
                enabled=publisher.enabled, on_change_only=publisher.on_change_only, created_at=stamp, updated_at=stamp,
            )  # fmt: skip
        self._publishers[publisher.id] = publisher
        log.info("MQTT publisher %s created (topic %s)%s", publisher.name, publisher.topic, by_actor(actor))
        body = publisher.to_json()
        self._bus.emit("mqtt-publisher.created", publisher=body)
        self._changed(publisher)
        return body

    def update_publisher(self, publisher_id: str, fields: Mapping[str, Any], actor: str | None = None) -> dict[str, Any]:
        publisher = self.publisher(publisher_id)
        changed = Publisher(**{**publisher.__dict__})
        self._apply_publisher_fields(changed, fields)
        changed.updated_at = self._clock.now_ms()
        with orm.db_session:
            self._db.MqttPublisher[publisher_id].set(
                name=changed.name, broker_id=changed.broker_id, topic=changed.topic, enabled=changed.enabled,
                on_change_only=changed.on_change_only, updated_at=changed.updated_at,
            )  # fmt: skip
        self._publishers[publisher_id] = changed
        log.info("MQTT publisher %s updated%s", changed.name, by_actor(actor))
        body = changed.to_json()
        self._bus.emit("mqtt-publisher.updated", publisher=body)
        self._changed(changed)
        return body

    def delete_publisher(self, publisher_id: str, actor: str | None = None) -> None:
        publisher = self.publisher(publisher_id)
        with orm.db_session:
            self._db.MqttPublisherMapping.select(lambda m: m.publisher_id == publisher_id).delete(bulk=True)
            self._db.MqttPublisher[publisher_id].delete()
        del self._publishers[publisher_id]
        log.info("MQTT publisher %s deleted%s", publisher.name, by_actor(actor))
        self._bus.emit("mqtt-publisher.removed", publisherId=publisher_id, publisherName=publisher.name)
        self._reindex()

    def _apply_publisher_fields(self, publisher: Publisher, fields: Mapping[str, Any]) -> None:
        if "name" in fields:
            publisher.name = fields["name"].strip()
        if "brokerId" in fields:
            if fields["brokerId"] not in self._brokers:
                raise BadRequest(f"brokerId: MQTT broker not found: {fields['brokerId']}")
            publisher.broker_id = fields["brokerId"]
        if "topic" in fields:
            publisher.topic = check_topic(fields["topic"])
        if "enabled" in fields:
            publisher.enabled = fields["enabled"]
        if "onChangeOnly" in fields:
            publisher.on_change_only = fields["onChangeOnly"]

    # ---- mappings --------------------------------------------------------------------------------
    def add_mapping(self, publisher_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        publisher = self.publisher(publisher_id)
        mapping = MappingRow(
            str(uuid.uuid4()), publisher_id, fields["publishKey"], fields["sourceType"], fields["sourceId"], fields["sourceKey"],
            fields.get("enabled", True), self._clock.now_ms(),
        )  # fmt: skip
        self._check_key_free(publisher, mapping.publish_key, None)
        with orm.db_session:
            self._db.MqttPublisherMapping(
                id=mapping.id, publisher_id=publisher_id, publish_key=mapping.publish_key, source_type=mapping.source_type,
                source_id=mapping.source_id, source_key=mapping.source_key, enabled=mapping.enabled, created_at=mapping.created_at,
            )  # fmt: skip
        publisher.mappings[mapping.id] = mapping
        body = mapping.to_json()
        self._bus.emit("mqtt-publisher.mapping.created", publisherId=publisher_id, mapping=body)
        self._touch(publisher)
        return body

    def update_mapping(self, publisher_id: str, mapping_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        publisher = self.publisher(publisher_id)
        mapping = self._mapping(publisher, mapping_id)
        changed = MappingRow(**{**mapping.__dict__})
        names = {"publishKey": "publish_key", "sourceType": "source_type", "sourceId": "source_id", "sourceKey": "source_key", "enabled": "enabled"}
        for name, attribute in names.items():
            if name in fields:
                setattr(changed, attribute, fields[name])
        self._check_key_free(publisher, changed.publish_key, mapping_id)
        with orm.db_session:
            self._db.MqttPublisherMapping[mapping_id].set(
                publish_key=changed.publish_key, source_type=changed.source_type, source_id=changed.source_id,
                source_key=changed.source_key, enabled=changed.enabled,
            )  # fmt: skip
        publisher.mappings[mapping_id] = changed
        body = changed.to_json()
        self._bus.emit("mqtt-publisher.mapping.created", publisherId=publisher_id, mapping=body)  # the spec has no .updated
        self._touch(publisher)
        return body

    def delete_mapping(self, publisher_id: str, mapping_id: str) -> None:
        publisher = self.publisher(publisher_id)
        self._mapping(publisher, mapping_id)
        with orm.db_session:
            self._db.MqttPublisherMapping[mapping_id].delete()
        del publisher.mappings[mapping_id]
        self._bus.emit("mqtt-publisher.mapping.removed", publisherId=publisher_id, mappingId=mapping_id)
        self._touch(publisher)

    @staticmethod
    def _mapping(publisher: Publisher, mapping_id: str) -> MappingRow:
        mapping = publisher.mappings.get(mapping_id)
        if mapping is None:
            raise NotFound(f"Mapping not found: {mapping_id}")
        return mapping

    @staticmethod
    def _check_key_free(publisher: Publisher, publish_key: str, mapping_id: str | None) -> None:
        for other in publisher.mappings.values():
            if other.publish_key == publish_key and other.id != mapping_id:
                raise Conflict(f"publishKey {publish_key} is already mapped in publisher {publisher.name}")

    def _touch(self, publisher: Publisher) -> None:
        publisher.updated_at = self._clock.now_ms()
        with orm.db_session:
            self._db.MqttPublisher[publisher.id].set(updated_at=publisher.updated_at)
        self._bus.emit("mqtt-publisher.updated", publisher=publisher.to_json())
        self._changed(publisher)

    def _changed(self, publisher: Publisher) -> None:
        """After any change to a publisher or its mappings: the index again, and its snapshot."""
        self._reindex()
        if self._running:
            self._worker.submit_outbound(self._snapshot_publisher, publisher.id)

    def _reindex(self) -> None:
        index: dict[tuple[str, str], list[tuple[Publisher, MappingRow]]] = {}
        for publisher in self._publishers.values():
            if publisher.enabled:
                for mapping in publisher.ordered_mappings():
                    if mapping.enabled:
                        index.setdefault((mapping.source_type, mapping.source_id), []).append((publisher, mapping))
        self._index = index

    # ---- the bus side: in memory, never waits --------------------------------------------------------
    def _on_equipment(self, event: Event) -> None:
        entries = self._index.get(("equipment", event["equipmentId"]))
        if entries:
            alias, value = event["alias"], event["value"]
            self._queue([(p.broker_id, p.topic, m.publish_key, value, p.on_change_only) for p, m in entries if m.source_key == alias])

    def _on_zone(self, event: Event) -> None:
        entries = self._index.get(("zone", event["zoneId"]))
        if entries:
            self._queue(self._items(entries, event["aggregatedData"] or {}))

    def _on_recipe(self, event: Event) -> None:
        entries = self._index.get(("recipe", event["instanceId"]))
        if entries:
            self._queue(self._items(entries, self._sources.values_of("recipe", event["instanceId"]) or {}))

    @staticmethod
    def _items(entries: list[tuple[Publisher, MappingRow]], values: Mapping[str, Any]) -> list[Item]:
        return [(p.broker_id, p.topic, m.publish_key, values.get(m.source_key), p.on_change_only) for p, m in entries]

    def _queue(self, items: list[Item]) -> None:
        if items and self._running:
            self._worker.submit_outbound(self._publish, items)

    # ---- the worker side ---------------------------------------------------------------------------
    def _publish(self, items: list[Item], force: bool = False) -> int:
        """Publish what was decided; the number of messages handed to a connected client."""
        sent = 0
        for broker_id, topic, key, value, on_change_only in items:
            if value is None or value is _MISSING:
                continue
            payload = dumps_text({key: convert(value)})
            cache_key = (broker_id, topic, key)
            if on_change_only and not force and self._last_sent.get(cache_key) == payload:
                continue
            if self.clients.publish(broker_id, topic, payload):
                self._last_sent[cache_key] = payload
                sent += 1
        return sent

    def _snapshot_items(self, publisher: Publisher) -> list[Item]:
        if not publisher.enabled:
            return []
        items: list[Item] = []
        for mapping in publisher.ordered_mappings():
            if mapping.enabled:
                values = self._sources.values_of(mapping.source_type, mapping.source_id) or {}
                items.append((publisher.broker_id, publisher.topic, mapping.publish_key, values.get(mapping.source_key, _MISSING), publisher.on_change_only))
        return items

    def _snapshot_publisher(self, publisher_id: str) -> int:
        publisher = self._publishers.get(publisher_id)
        return self._publish(self._snapshot_items(publisher), force=True) if publisher is not None else 0

    def _snapshot_broker(self, broker_id: str) -> None:
        items = [item for p in self._publishers.values() if p.broker_id == broker_id for item in self._snapshot_items(p)]
        sent = self._publish(items, force=True)
        log.info("snapshot of broker %s: %d message(s) published", broker_id, sent)

    def test(self, publisher_id: str) -> int:
        """Publish the publisher's snapshot now (through the worker); how many messages went out."""
        self.publisher(publisher_id)
        if self._worker.held_off or not self._running:
            return 0
        result: AsyncResult = AsyncResult()
        if not self._worker.submit_outbound(lambda: result.set(self._snapshot_publisher(publisher_id))):
            return 0
        try:
            return result.get(timeout=TEST_TIMEOUT_S)
        except Timeout:
            return 0


def check_topic(topic: str) -> str:
    """A topic one may publish to: no wildcard, no NUL, at most 65535 bytes."""
    if "+" in topic or "#" in topic:
        raise BadRequest("topic must not contain the wildcards + or #")
    if "\x00" in topic:
        raise BadRequest("topic must not contain a NUL character")
    if len(topic.encode("utf-8")) > 65535:
        raise BadRequest("topic is too long")
    return topic
