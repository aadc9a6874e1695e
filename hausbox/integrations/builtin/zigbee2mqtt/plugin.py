"""The zigbee2mqtt integration object, driven by the registry through the plugin API (version 2).

Messages under the base topic B (default ``zigbee2mqtt``):

- ``B/bridge/devices`` (retained list): every device is upserted, then the devices the list no
  longer holds are removed (an empty list removes nothing: the device manager guards that);
- ``B/bridge/event``: logged only, the next device list brings the change;
- ``B/<friendly name>``: a JSON state, given to the device manager as it is (it keeps the keys
  the device declared and the well-known ones);
- ``B/<friendly name>/availability``: ``{"state": "online"}`` or plain ``online`` / ``offline``.

An order ``key = value`` is published as ``{"key": value}`` on ``B/<friendly name>/set`` (QoS 1).
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from typing import Any

from hausbox.integrations.builtin.zigbee2mqtt.bridge import (
    SOURCE,
    discovered_device,
    friendly_name,
    is_coordinator,
    present_names,
    skip_reason,
)
from hausbox.integrations.builtin.zigbee2mqtt.connection import (
    MqttConnection,
    parse_broker_url,
)
from hausbox.integrations.builtin.zigbee2mqtt.topics import (
    Router,
    availability,
    json_object,
)
from hausbox.sdk import API_VERSION, IntegrationContext, SettingDef

DEFAULT_BASE_TOPIC = "zigbee2mqtt"
MAX_PENDING_AVAILABILITY = 10_000


def _source_timestamp(last_seen: Any) -> str | None:
    """zigbee2mqtt's ``last_seen`` (when enabled: ISO text, or epoch milliseconds) as ISO text."""
    if isinstance(last_seen, str) and last_seen:
        return last_seen
    if isinstance(last_seen, (int, float)) and not isinstance(last_seen, bool) and last_seen > 0:
        stamp = datetime.fromtimestamp(last_seen / 1000, tz=timezone.utc)
        return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


class Zigbee2MqttIntegration:
    id = "zigbee2mqtt"
    name = "Zigbee2MQTT"
    description = "Zigbee devices through a zigbee2mqtt bridge on an MQTT broker"
    icon = "zigbee"
    api_version = API_VERSION

    def __init__(self, context: IntegrationContext):
        self._context = context
        self._log = context.logger
        self._default_client_id = f"hausbox-{secrets.token_hex(4)}"
        self._connection: MqttConnection | None = None
        self._session: object | None = None  # identifies the connection whose reports count
        self._router = Router(DEFAULT_BASE_TOPIC)
        self._status = "disconnected"
        self._detail: str | None = None
        self._known: frozenset[str] | None = None  # friendly names of the last device list
        self._pending_availability: dict[str, str] = {}  # for names not known yet

    # ---- what the settings page shows ----------------------------------------------------------
    def settings_schema(self) -> list[SettingDef]:
        return [
            SettingDef("mqtt_url", "MQTT broker URL", required=True, placeholder="mqtt://192.168.1.10:1883"),
            SettingDef("base_topic", "Base topic", placeholder=DEFAULT_BASE_TOPIC, default=DEFAULT_BASE_TOPIC),
            SettingDef("mqtt_username", "MQTT username"),
            SettingDef("mqtt_password", "MQTT password", type="password"),
            SettingDef("mqtt_client_id", "MQTT client id", placeholder="hausbox-<random>"),
        ]

    def _setting(self, key: str) -> str | None:
        value = self._context.settings.get(key)
        if value is None:
            return None
        text = str(value).strip()
        return text or None

    def is_configured(self) -> bool:
        return self._setting("mqtt_url") is not None

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        if self._connection is not None:
            self.stop()
        try:
            address = parse_broker_url(self._setting("mqtt_url") or "")
        except ValueError as error:
            self._set_status("error", str(error))
            raise
        self._router = Router(self._setting("base_topic") or DEFAULT_BASE_TOPIC)
        self._known = None
        self._pending_availability = {}
        username = self._setting("mqtt_username") or address.username
        password = self._context.settings.get("mqtt_password")  # as typed: spaces may be part of it
        password = str(password) if password not in (None, "") else address.password
        session = self._session = object()
        self._connection = MqttConnection(
            address,
            client_id=self._setting("mqtt_client_id") or self._default_client_id,
            subscriptions=[self._router.subscription],
            on_message=lambda topic, payload: self._on_message(session, topic, payload),
            on_status=lambda status, detail: self._on_connection_status(session, status, detail),
            logger=self._log,
            username=username,
            password=password if username else None,
        )
        self._log.info("connecting to broker %s (base topic %s)", address.label, self._router.base)
        self._set_status("disconnected", None, quiet=True)
        self._connection.start()

    def stop(self) -> None:
        connection, self._connection = self._connection, None
        self._session = None
        if connection is not None:
            connection.stop()
            self._log.info("disconnected from broker %s", connection.address.label)
        self._set_status("disconnected", None)

    def status(self) -> str:
        return self._status

    def status_detail(self) -> str | None:
        return self._detail if self._status != "connected" else None

    def _on_connection_status(self, session: object, status: str, detail: str | None) -> None:
        if session is self._session:
            self._set_status(status, detail)

    def _set_status(self, status: str, detail: str | None, quiet: bool = False) -> None:
        if (status, detail) == (self._status, self._detail):
            return
        self._status, self._detail = status, detail
        if quiet:
            pass
        elif status == "connected":
            self._log.info("connected to broker %s", self._connection.address.label if self._connection else "")
        elif status == "error":
            self._log.warning("%s", detail)
        elif detail:
            self._log.info("%s", detail)
        self._context.report_status(status, detail)

    # ---- orders ------------------------------------------------------------------------------
    def execute_order(self, device: Any, order_key: str, value: Any) -> None:
        connection = self._connection
        if connection is None or not connection.connected:
            raise ConnectionError("zigbee2mqtt is not connected to its MQTT broker")
        topic = self._router.set_topic(device.source_device_id)
        connection.publish(topic, json.dumps({order_key: value}), qos=1)
        self._log.debug("order %s=%r sent on %s", order_key, value, topic)

    # ---- messages (in the connection's greenlet) -----------------------------------------------
    def _on_message(self, session: object, topic: str, payload: bytes) -> None:
        if session is not self._session:
            return
        kind, name = self._router.classify(topic, self._known)
        if kind == "state":
            self._on_state(name, payload)  # type: ignore[arg-type]
        elif kind == "availability":
            self._on_availability(name, payload)  # type: ignore[arg-type]
        elif kind == "devices":
            self._on_devices(payload)
        elif kind == "event":
            self._on_event(payload)

    def _on_state(self, name: str, payload: bytes) -> None:
        state = json_object(payload)
        if state is None:
            return
        if self._pending_availability:
            self._pending_availability.pop(name, None)  # a message is newer news than availability
        self._context.devices.update_data(name, state, _source_timestamp(state.get("last_seen")))

    def _on_availability(self, name: str, payload: bytes) -> None:
        status = availability(payload)
        if status is None:
            return
        known = self._known
        if known is None or name not in known:
            # Not listed yet (availability is retained and may come before bridge/devices):
            # applied when the device list arrives.
            if name not in self._pending_availability and len(self._pending_availability) >= MAX_PENDING_AVAILABILITY:
                self._pending_availability.pop(next(iter(self._pending_availability)))
            self._pending_availability[name] = status
        if known is None or name in known:
            self._context.devices.update_status(name, status)

    def _on_devices(self, payload: bytes) -> None:
        try:
            entries = json.loads(payload)
        except ValueError:
            self._log.warning("bridge/devices is not JSON: ignored")
            return
        if not isinstance(entries, list):
            self._log.warning("bridge/devices is not a list: ignored")
            return
        devices = self._context.devices
        listed: set[str] = set()
        for entry in entries:
            name = friendly_name(entry)
            try:
                found = discovered_device(entry)
                if found is None:
                    if name and not is_coordinator(entry):
                        self._log.debug("device %s skipped: %s", name, skip_reason(entry))
                    continue
                devices.upsert_from_discovery(SOURCE, found)
                listed.add(found.source_device_id)
            except Exception:  # noqa: BLE001 - one odd entry must not stop the others
                self._log.exception("could not read device %s from bridge/devices", name)
                if name:
                    listed.add(name)
        present = present_names(entries)
        if not present:
            self._log.warning("bridge/devices lists no device: the known devices are kept")
            return
        removed = devices.remove_stale(present)
        self._known = frozenset(listed)
        self._log.info("bridge/devices: %d devices (%d removed)", len(listed), removed)
        for name in [n for n in self._pending_availability if n in self._known]:
            devices.update_status(name, self._pending_availability.pop(name))

    def _on_event(self, payload: bytes) -> None:
        event = json_object(payload) or {}
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        self._log.info("bridge event %s: %s", event.get("type", "?"), data.get("friendly_name") or data.get("ieee_address") or "")


def create(context: IntegrationContext) -> Zigbee2MqttIntegration:
    return Zigbee2MqttIntegration(context)
