"""Notification publishers: a channel each (telegram, webhook, webpush) and mappings from equipment,
zone and recipe values to messages.

- Configuration is admin-only and lives in memory, written through. The channel's secrets
  (``botToken``, a webhook's ``secret``) are read by administrators only: every event carries the
  publisher with them masked, and they are registered with the log redactor as soon as they are
  known, so no log line shows them.
- Triggers (the digest's rules): a null value is ignored; ``previous`` is the event's previous
  value for an equipment, the last value the mapping notified for a zone or a recipe; nothing is
  sent when the value equals it; a boolean or a string is sent at once on any change; a number (or
  anything else) when the mapping never sent, or ``throttleMs`` (300000 by default) after its
  last send. Zone and recipe events of one source are taken at most once a second per mapping.
- Text: a boolean sends ``message`` alone; anything else ``"<message> : <value>"``, an ISO time
  shown as ``dd/mm/yyyy hh:mm`` in the home's time zone.
- System alarms (raised and resolved) go to every enabled publisher with ``forwardAlarms``, as
  ``"⚠️ <source> : <message>"`` / ``"✅ <source> : <message>"``.
- The bus side runs in the ``notifications`` worker, as outbound jobs (held in shadow mode); the
  sending runs in one delivery lane per destination (``delivery.py``), so a failing channel is
  retried with backoff and never holds another.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping

import orjson
from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, iso_utc, parse_iso
from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.core.urls import MASK, mask_credentials
from hausbox.core.workers import OutboundGate, Worker
from hausbox.notifications import telegram, webhook, webpush
from hausbox.notifications.delivery import BACKOFF_S, DeliveryError, Lane, Message, combined_status
from hausbox.notifications.push import PushSubscriptions

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

log = logging.getLogger("hausbox.notifications")

CHANNELS = {telegram.TYPE: telegram, webhook.TYPE: webhook, webpush.TYPE: webpush}
SOURCE_TYPES = ("equipment", "zone", "recipe")
NAME_MAX, MESSAGE_MAX = 100, 1000
DEFAULT_THROTTLE_MS = 300_000
DEDUPE_MS = 1000
TEST_TEXT = "hausbox: connection OK"
_NEVER = object()
_ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


@dataclass
class NotificationMapping:
    id: str
    publisher_id: str
    message: str
    source_type: str
    source_id: str
    source_key: str
    throttle_ms: int
    created_at: int
    # runtime state (not kept across restarts)
    last_value: Any = _NEVER
    last_sent_ms: int | None = None
    last_seen_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "publisherId": self.publisher_id, "message": self.message, "sourceType": self.source_type,
            "sourceId": self.source_id, "sourceKey": self.source_key, "throttleMs": self.throttle_ms, "createdAt": iso_utc(self.created_at),
        }  # fmt: skip


@dataclass
class Publisher:
    id: str
    name: str
    channel_type: str
    config: dict[str, Any]
    enabled: bool
    forward_alarms: bool
    created_at: int
    updated_at: int
    mappings: dict[str, NotificationMapping] = field(default_factory=dict)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(str(self.config[name]) for name in CHANNELS[self.channel_type].SECRET_FIELDS if self.config.get(name))

    def masked_config(self) -> dict[str, Any]:
        """The channel config as events show it: secrets masked, credentials in URLs too."""
        masked = {key: MASK if key in CHANNELS[self.channel_type].SECRET_FIELDS else value for key, value in self.config.items()}
        return {key: mask_credentials(value) if isinstance(value, str) else value for key, value in masked.items()}

    def to_json(self, masked: bool = False) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "channelType": self.channel_type,
            "channelConfig": self.masked_config() if masked else dict(self.config),
            "enabled": self.enabled,
            "forwardAlarms": self.forward_alarms,
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
            "mappings": [m.to_json() for m in sorted(self.mappings.values(), key=lambda m: (m.created_at, m.id))],
        }


def format_value(value: Any, tz: Any) -> str:
    if isinstance(value, str) and _ISO_TIME.match(value):
        try:
            return datetime.fromtimestamp(parse_iso(value) / 1000, tz=tz).strftime("%d/%m/%Y %H:%M")
        except ValueError:
            return value
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


def message_text(message: str, value: Any, tz: Any) -> str:
    return message if isinstance(value, bool) else f"{message} : {format_value(value, tz)}"


class NotificationService:
    def __init__(self, db: orm.Database, bus: EventBus, worker: Worker, clock: Clock, gate: OutboundGate, add_secret: Callable[[str], None],
                 vapid_private_key: str, current_value: Callable[[str, str, str], Any], source_exists: Callable[[str, str], bool]):  # fmt: skip
        self._db = db
        self._bus = bus
        self._worker = worker
        self._clock = clock
        self._gate = gate
        self._add_secret = add_secret
        self._current_value = current_value
        self._source_exists = source_exists
        self.webpush = webpush.WebPush(vapid_private_key)
        self.push = PushSubscriptions(db, clock)
        self.backoff_s = BACKOFF_S
        self._publishers: dict[str, Publisher] = {}
        self._watch: dict[str, dict[str, list[NotificationMapping]]] = {kind: {} for kind in SOURCE_TYPES}
        self._lanes: dict[str, Lane] = {}
        self._started = False
        self._load()
        worker.on("equipment.data.changed", self._on_equipment, accept=lambda e: e["equipmentId"] in self._watch["equipment"], outbound=True)
        worker.on("zone.data.changed", self._on_zone, accept=lambda e: e["zoneId"] in self._watch["zone"], outbound=True)
        worker.on("recipe.instance.state.changed", self._on_recipe, accept=lambda e: e["instanceId"] in self._watch["recipe"], outbound=True)
        worker.on("system.alarm.raised", self._on_alarm_raised, accept=self._wants_alarms, outbound=True)
        worker.on("system.alarm.resolved", self._on_alarm_resolved, accept=self._wants_alarms, outbound=True)

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.NotificationPublisher.select():
                self._publishers[row.id] = Publisher(
                    row.id, row.name, row.channel_type, dict(row.channel_config or {}), row.enabled, row.forward_alarms, row.created_at, row.updated_at
                )
            for row in self._db.NotificationMapping.select():
                publisher = self._publishers.get(row.publisher_id)
                if publisher is not None:
                    publisher.mappings[row.id] = NotificationMapping(
                        row.id, row.publisher_id, row.message, row.source_type, row.source_id, row.source_key, row.throttle_ms, row.created_at
                    )
        for publisher in self._publishers.values():
            self._learn_secrets(publisher)
        self._reindex()

    def _learn_secrets(self, publisher: Publisher) -> None:
        for secret in publisher.secrets:
            self._add_secret(secret)

    def _reindex(self) -> None:
        watch: dict[str, dict[str, list[NotificationMapping]]] = {kind: {} for kind in SOURCE_TYPES}
        for publisher in self._publishers.values():
            for mapping in publisher.mappings.values():
                watch[mapping.source_type].setdefault(mapping.source_id, []).append(mapping)
        self._watch = watch

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._started = True
        for lane in self._lanes.values():
            lane.start()

    def stop(self) -> None:
        self._started = False
        for lane in list(self._lanes.values()):
            lane.stop()

    # ---- reads -------------------------------------------------------------------------------
    def get(self, publisher_id: str) -> Publisher:
        publisher = self._publishers.get(publisher_id)
        if publisher is None:
            raise NotFound(f"Notification publisher not found: {publisher_id}")
        return publisher

    def get_json(self, publisher_id: str) -> dict[str, Any]:
        publisher = self.get(publisher_id)
        return {**publisher.to_json(), "delivery": self.delivery_status(publisher_id)}

    def all_json(self) -> list[dict[str, Any]]:
        ordered = sorted(self._publishers.values(), key=lambda p: (p.name.lower(), p.id))
        return [{**p.to_json(), "delivery": self.delivery_status(p.id)} for p in ordered]

    def delivery_status(self, publisher_id: str) -> dict[str, Any]:
        return combined_status([lane for key, lane in self._lanes.items() if key.split(":", 1)[0] == publisher_id])

    # ---- configuration (admin) ---------------------------------------------------------------
    def create(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        channel_type = fields["channelType"]
        config = self._check_config(channel_type, fields["channelConfig"])
        stamp = self._clock.now_ms()
        publisher = Publisher(str(uuid.uuid4()), fields["name"].strip(), channel_type, config, fields.get("enabled", True) is not False,
                              bool(fields.get("forwardAlarms", False)), stamp, stamp)  # fmt: skip
        self._learn_secrets(publisher)
        with orm.db_session:
            self._db.NotificationPublisher(id=publisher.id, name=publisher.name, channel_type=channel_type, channel_config=config,
                                           enabled=publisher.enabled, forward_alarms=publisher.forward_alarms, created_at=stamp, updated_at=stamp)  # fmt: skip
        self._publishers[publisher.id] = publisher
        log.info("notification publisher %s (%s) created", publisher.name, channel_type)
        self._bus.emit("notification-publisher.created", publisher=publisher.to_json(masked=True))
        return self.get_json(publisher.id)

    def update(self, publisher_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        publisher = self.get(publisher_id)
        channel_type = fields.get("channelType", publisher.channel_type)
        if "channelConfig" in fields or channel_type != publisher.channel_type:
            config = self._check_config(channel_type, fields.get("channelConfig", publisher.config))
        else:
            config = publisher.config
        changes = {"channel_type": channel_type, "channel_config": config, "updated_at": self._clock.now_ms()}
        if "name" in fields:
            changes["name"] = fields["name"].strip()
        if fields.get("enabled") is not None:
            changes["enabled"] = bool(fields["enabled"])
        if fields.get("forwardAlarms") is not None:
            changes["forward_alarms"] = bool(fields["forwardAlarms"])
        for secret in CHANNELS[channel_type].SECRET_FIELDS:
            if config.get(secret):
                self._add_secret(str(config[secret]))
        with orm.db_session:
            self._db.NotificationPublisher[publisher_id].set(**changes)
        publisher.channel_type, publisher.config, publisher.updated_at = channel_type, config, changes["updated_at"]
        publisher.name = changes.get("name", publisher.name)
        publisher.enabled = changes.get("enabled", publisher.enabled)
        publisher.forward_alarms = changes.get("forward_alarms", publisher.forward_alarms)
        self._drop_lanes(publisher_id)  # a new destination starts afresh
        self._bus.emit("notification-publisher.updated", publisher=publisher.to_json(masked=True))
        return self.get_json(publisher_id)

    def delete(self, publisher_id: str) -> None:
        publisher = self.get(publisher_id)
        with orm.db_session:
            self._db.NotificationMapping.select(lambda m: m.publisher_id == publisher_id).delete(bulk=True)
            self._db.NotificationPublisher[publisher_id].delete()
        del self._publishers[publisher_id]
        self._reindex()
        self._drop_lanes(publisher_id)
        log.info("notification publisher %s deleted", publisher.name)
        self._bus.emit("notification-publisher.removed", publisherId=publisher_id, publisherName=publisher.name)

    def _check_config(self, channel_type: str, config: Any) -> dict[str, Any]:
        if channel_type not in CHANNELS:
            raise BadRequest(f"channelType must be one of {', '.join(CHANNELS)}")
        if not isinstance(config, dict):
            raise BadRequest("channelConfig must be an object")
        return CHANNELS[channel_type].check_config(config)

    # ---- mappings ----------------------------------------------------------------------------
    def add_mapping(self, publisher_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        publisher = self.get(publisher_id)
        source = self._check_source(publisher, fields["sourceType"], fields["sourceId"], fields["sourceKey"])
        throttle = fields.get("throttleMs")
        mapping = NotificationMapping(str(uuid.uuid4()), publisher_id, fields["message"], *source,
                                      DEFAULT_THROTTLE_MS if throttle is None else throttle, self._clock.now_ms())  # fmt: skip
        with orm.db_session:
            self._db.NotificationMapping(id=mapping.id, publisher_id=publisher_id, message=mapping.message, source_type=mapping.source_type,
                                         source_id=mapping.source_id, source_key=mapping.source_key, throttle_ms=mapping.throttle_ms,
                                         created_at=mapping.created_at)  # fmt: skip
        publisher.mappings[mapping.id] = mapping
        self._reindex()
        body = mapping.to_json()
        self._bus.emit("notification-publisher.mapping.created", publisherId=publisher_id, mapping=body)
        return body

    def update_mapping(self, publisher_id: str, mapping_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        publisher = self.get(publisher_id)
        mapping = self._mapping(publisher, mapping_id)
        source = (fields.get("sourceType") or mapping.source_type, fields.get("sourceId") or mapping.source_id, fields.get("sourceKey") or mapping.source_key)
        if source != (mapping.source_type, mapping.source_id, mapping.source_key):
            source = self._check_source(publisher, *source, ignore=mapping_id)
        message = fields.get("message") or mapping.message
        throttle = mapping.throttle_ms if fields.get("throttleMs") is None else fields["throttleMs"]
        with orm.db_session:
            self._db.NotificationMapping[mapping_id].set(message=message, source_type=source[0], source_id=source[1], source_key=source[2], throttle_ms=throttle)
        updated = NotificationMapping(mapping_id, publisher_id, message, *source, throttle, mapping.created_at)
        publisher.mappings[mapping_id] = updated
        self._reindex()
        body = updated.to_json()
        self._bus.emit("notification-publisher.mapping.created", publisherId=publisher_id, mapping=body)  # as the digest's engine does
        return body

    def delete_mapping(self, publisher_id: str, mapping_id: str) -> None:
        publisher = self.get(publisher_id)
        self._mapping(publisher, mapping_id)
        with orm.db_session:
            self._db.NotificationMapping[mapping_id].delete()
        del publisher.mappings[mapping_id]
        self._reindex()
        self._bus.emit("notification-publisher.mapping.removed", publisherId=publisher_id, mappingId=mapping_id)

    @staticmethod
    def _mapping(publisher: Publisher, mapping_id: str) -> NotificationMapping:
        mapping = publisher.mappings.get(mapping_id)
        if mapping is None:
            raise NotFound(f"Mapping not found: {mapping_id}")
        return mapping

    def _check_source(self, publisher: Publisher, source_type: str, source_id: str, source_key: str, ignore: str | None = None) -> tuple[str, str, str]:
        if source_type not in SOURCE_TYPES:
            raise BadRequest(f"sourceType must be one of {', '.join(SOURCE_TYPES)}")
        if not self._source_exists(source_type, source_id):
            raise BadRequest(f"sourceId: {source_type} not found: {source_id}")
        for other in publisher.mappings.values():
            if other.id != ignore and (other.source_type, other.source_id, other.source_key) == (source_type, source_id, source_key):
                raise Conflict(f"The publisher already has a mapping for {source_type} {source_id} {source_key}")
        return source_type, source_id, source_key

    # ---- triggers (the notifications worker) -------------------------------------------------
    def _on_equipment(self, event: Event) -> None:
        for mapping in list(self._watch["equipment"].get(event["equipmentId"], ())):
            if mapping.source_key == event["alias"]:
                self._consider(mapping, event["value"], event.get("previous"))

    def _on_zone(self, event: Event) -> None:
        data = event["aggregatedData"] or {}
        for mapping in list(self._watch["zone"].get(event["zoneId"], ())):
            if mapping.source_key in data and self._not_a_repeat(mapping):
                self._consider(mapping, data[mapping.source_key], None if mapping.last_value is _NEVER else mapping.last_value)

    def _on_recipe(self, event: Event) -> None:
        for mapping in list(self._watch["recipe"].get(event["instanceId"], ())):
            if self._not_a_repeat(mapping):
                value = self._current_value("recipe", mapping.source_id, mapping.source_key)
                self._consider(mapping, value, None if mapping.last_value is _NEVER else mapping.last_value)

    def _not_a_repeat(self, mapping: NotificationMapping) -> bool:
        now = self._clock.now_ms()
        if mapping.last_seen_ms is not None and now - mapping.last_seen_ms < DEDUPE_MS:
            return False
        mapping.last_seen_ms = now
        return True

    def _consider(self, mapping: NotificationMapping, value: Any, previous: Any) -> None:
        publisher = self._publishers.get(mapping.publisher_id)
        if publisher is None or not publisher.enabled or value is None or value == previous and type(value) is type(previous):
            return
        now = self._clock.now_ms()
        immediate = isinstance(value, (bool, str))
        if not immediate and mapping.last_sent_ms is not None and now - mapping.last_sent_ms < mapping.throttle_ms:
            return
        mapping.last_value, mapping.last_sent_ms = value, now
        text = message_text(mapping.message, value, self._clock.tz)
        extra = {"mappingId": mapping.id, "sourceType": mapping.source_type, "sourceId": mapping.source_id, "sourceKey": mapping.source_key, "value": value}
        self._dispatch(publisher, Message(text, publisher.name, "mapping", extra))

    def _wants_alarms(self, _event: Event) -> bool:
        return any(p.enabled and p.forward_alarms for p in self._publishers.values())

    def _on_alarm_raised(self, event: Event) -> None:
        self._forward_alarm(event, False, event["level"])

    def _on_alarm_resolved(self, event: Event) -> None:
        self._forward_alarm(event, True, None)

    def _forward_alarm(self, event: Event, resolved: bool, level: str | None) -> None:
        text = f"{'✅' if resolved else '⚠️'} {event['source']} : {event['message']}"
        extra = {"alarmId": event["alarmId"], "level": level, "source": event["source"], "message": event["message"], "resolved": resolved}
        for publisher in list(self._publishers.values()):
            if publisher.enabled and publisher.forward_alarms:
                self._dispatch(publisher, Message(text, "hausbox", "alarm", extra))

    # ---- test routes ---------------------------------------------------------------------------
    def test_channel(self, publisher_id: str) -> dict[str, Any]:
        """Send a test message now, in the request; a failure is a 400 saying why."""
        publisher = self.get(publisher_id)
        self._check_gate()
        message = Message(TEST_TEXT, publisher.name, "test")
        import requests

        with requests.Session() as session:
            try:
                if publisher.channel_type != webpush.TYPE:
                    self._send(publisher, message, session)
                    return {"success": True, "sent": 1}
                subscriptions = self.push.all()
                if not subscriptions:
                    raise BadRequest("No push subscription is registered")
                sent = 0
                for subscription in subscriptions:
                    try:
                        self._send_push(publisher, subscription, message, session)
                        sent += 1
                    except DeliveryError as error:
                        if not error.gone:
                            raise
                        self._subscription_gone(subscription["id"])
            except DeliveryError as error:
                raise BadRequest(f"Test message not delivered: {error.message}") from None
        if not sent:
            raise BadRequest("Test message not delivered: every push subscription was gone (removed)")
        return {"success": True, "sent": sent}

    def test_mappings(self, publisher_id: str) -> dict[str, Any]:
        """Queue the current value of each mapping (those with a value); ``{sent: n}``."""
        publisher = self.get(publisher_id)
        self._check_gate()
        sent = 0
        for mapping in sorted(publisher.mappings.values(), key=lambda m: (m.created_at, m.id)):
            value = self._current_value(mapping.source_type, mapping.source_id, mapping.source_key)
            if value is None:
                continue
            extra = {"mappingId": mapping.id, "sourceType": mapping.source_type, "sourceId": mapping.source_id, "sourceKey": mapping.source_key, "value": value}
            self._dispatch(publisher, Message(message_text(mapping.message, value, self._clock.tz), publisher.name, "test", extra))
            sent += 1
        return {"sent": sent}

    def _check_gate(self) -> None:
        if not self._gate.is_open:
            raise Conflict(f"Notifications are held ({', '.join(self._gate.reasons)})")

    # ---- delivery ----------------------------------------------------------------------------
    def _dispatch(self, publisher: Publisher, message: Message) -> None:
        if publisher.channel_type == webpush.TYPE:
            for subscription in self.push.all():
                key = f"{publisher.id}:{subscription['id']}"
                self._lane(key, lambda m, s, sub=subscription, pid=publisher.id: self._deliver_push(pid, sub, m, s), subscription["id"]).put(message)
        else:
            self._lane(publisher.id, lambda m, s, pid=publisher.id: self._deliver(pid, m, s)).put(message)

    def _lane(self, key: str, deliver: Callable[[Message, requests.Session], None], subscription_id: str | None = None) -> Lane:
        lane = self._lanes.get(key)
        if lane is None:
            on_gone = (lambda: self._subscription_gone(subscription_id)) if subscription_id else None
            lane = self._lanes[key] = Lane(key, deliver, self._gate, backoff_s=self.backoff_s, on_gone=on_gone)
            if self._started:
                lane.start()
        return lane

    def _drop_lanes(self, publisher_id: str) -> None:
        for key in [k for k in self._lanes if k.split(":", 1)[0] == publisher_id]:
            self._lanes.pop(key).stop()

    def _subscription_gone(self, subscription_id: str) -> None:
        self.push.remove_by_id(subscription_id)
        for key in [k for k in self._lanes if k.endswith(":" + subscription_id)]:
            self._lanes.pop(key).stop()  # the lane that learnt it ends after this call

    def _deliver(self, publisher_id: str, message: Message, session: requests.Session) -> None:
        publisher = self._publishers.get(publisher_id)
        if publisher is not None:
            self._send(publisher, message, session)

    def _deliver_push(self, publisher_id: str, subscription: dict[str, Any], message: Message, session: requests.Session) -> None:
        publisher = self._publishers.get(publisher_id)
        if publisher is not None:
            self._send_push(publisher, subscription, message, session)

    def _send(self, publisher: Publisher, message: Message, session: requests.Session) -> None:
        if publisher.channel_type == telegram.TYPE:
            telegram.send(session, publisher.config, message.text)
        elif publisher.channel_type == webhook.TYPE:
            payload = {"text": message.text, "title": message.title, "kind": message.kind, "publisherId": publisher.id,
                       "publisherName": publisher.name, "sentAt": iso_utc(self._clock.now_ms()), **message.extra}  # fmt: skip
            webhook.send(session, publisher.config, payload)

    def _send_push(self, publisher: Publisher, subscription: dict[str, Any], message: Message, session: requests.Session) -> None:
        payload = {"title": message.title, "body": message.text, "kind": message.kind, "publisherId": publisher.id, "timestamp": self._clock.now_ms()}
        info = {"endpoint": subscription["endpoint"], "keys": {"p256dh": subscription["p256dh"], "auth": subscription["auth"]}}
        self.webpush.send(session, info, payload, publisher.config.get("subject"))

    def idle(self) -> bool:
        """No lane holds a message (tests wait for this)."""
        return all(lane.idle() for lane in self._lanes.values())
