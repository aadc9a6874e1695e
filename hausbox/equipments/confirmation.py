"""Order delivery confirmation: did the device really do what it was told?

A sent order only proves the integration accepted it. For a *confirmable* order (the equipment has a
mirror data binding whose value can be compared with the ordered one) the ordered value is
expected on ``equipment.data.changed`` within ``wait_s`` (30 s). Otherwise the order is reported
``equipment.order.unconfirmed`` (reason ``timeout``, or ``device-offline`` at once when every target
device was offline at send time; in the first minute after a start only a status seen to change
counts as offline, the one restored from the database may be stale) and a warning alarm is raised. When a target device comes back
online within ``retry_window_s`` (1 h) of the order, the order is re-sent once with the source
``{"kind": "external", "channel": "delivery-retry"}``. The alarm is resolved when the value finally
arrives.

The mirror of an order alias is the data binding of the same alias or, for a ``light_toggle`` /
``toggle_power`` order, the ``light_state`` measure (else the ``state`` alias). Nothing here ever
blocks the order request: the order path only records an entry; waiting is a timer greenlet and
the re-send runs in its own greenlet.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import gevent

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import now_ms
from hausbox.core.workers import Worker
from hausbox.devices.manager import DeviceManager
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.system.alarms import Alarms

log = logging.getLogger("hausbox.order-confirmation")

WAIT_S = 30.0
RETRY_WINDOW_S = 3600.0
# Right after a start the statuses are the ones the last shutdown left in the database, until the
# integrations report (zigbee2mqtt replays its availability a moment after connecting): during this
# window an "offline" never seen to change is no proof, and the normal wait decides instead.
STATUS_SETTLE_S = 60.0
RETRY_SOURCE = {"kind": "external", "channel": "delivery-retry"}
ALARM_SOURCE = "order-confirmation"
TOGGLE_CATEGORIES = frozenset({"light_toggle", "toggle_power"})
_TRUE_WORDS = frozenset({"on", "true"})
_FALSE_WORDS = frozenset({"off", "false"})


def normalise(value: Any) -> Any:
    """A comparable form: on/true -> True, off/false -> False, numeric text -> float, text lowered."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE_WORDS:
            return True
        if text in _FALSE_WORDS:
            return False
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text
    return value


def values_match(ordered: Any, actual: Any) -> bool:
    a, b = normalise(ordered), normalise(actual)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= max(0.5, 0.01 * abs(a))
    return a == b


def comparable(ordered: Any, enum_values: list | None) -> bool:
    """Whether comparing ``ordered`` with the mirror means something (never CLOSE vs CLOSED)."""
    normalised = normalise(ordered)
    if isinstance(normalised, (bool, float)):
        return True
    if isinstance(normalised, str) and enum_values:
        return any(isinstance(e, str) and e.strip().lower() == normalised for e in enum_values)
    return False


class Pending:
    __slots__ = ("equipment_id", "alias", "mirror", "value", "device_ids", "sent_at", "timer", "unconfirmed", "offline_at_send", "retried", "alarm_raised")

    def __init__(self, equipment_id: str, alias: str, mirror: str, value: Any, device_ids: list[str]):
        self.equipment_id, self.alias, self.mirror, self.value, self.device_ids = equipment_id, alias, mirror, value, device_ids
        self.sent_at = now_ms()
        self.timer: gevent.Greenlet | None = None
        self.unconfirmed = False
        self.offline_at_send = False
        self.retried = False
        self.alarm_raised = False

    @property
    def alarm_id(self) -> str:
        return f"order-unconfirmed:{self.equipment_id}:{self.alias}"


class DeliveryConfirmation:
    def __init__(
        self, bus: EventBus, worker: Worker, equipments: EquipmentManager, devices: DeviceManager, orders: OrderService, alarms: Alarms,
        wait_s: float = WAIT_S, retry_window_s: float = RETRY_WINDOW_S, settle_s: float = STATUS_SETTLE_S,
    ):  # fmt: skip
        self._bus = bus
        self._worker = worker  # bus events, time-outs and re-sends run here, in order
        self._equipments = equipments
        self._devices = devices
        self._orders = orders
        self._alarms = alarms
        self.wait_s = wait_s
        self.retry_window_s = retry_window_s
        self._settled_at = time.monotonic() + settle_s
        self._status_seen: set[str] = set()  # devices whose status changed since the start
        # equipment id -> order alias -> what we wait for; kept small (one entry per alias at most)
        self._pending: dict[str, dict[str, Pending]] = {}
        orders.after_send.append(self._on_sent)
        worker.on("equipment.data.changed", self._on_data_changed, accept=lambda e: e["equipmentId"] in self._pending)
        worker.on("device.status_changed", self._on_status_changed)
        worker.on("equipment.removed", self._on_equipment_removed)

    def stop(self) -> None:
        for entries in self._pending.values():
            for entry in entries.values():
                self._cancel_timer(entry)
        self._pending.clear()

    def pending(self, equipment_id: str, alias: str) -> Pending | None:
        return self._pending.get(equipment_id, {}).get(alias)

    # ---- the order path ----------------------------------------------------------------------
    def mirror_of(self, equipment: Equipment, alias: str) -> str | None:
        if alias in equipment.data_bindings:
            return alias
        binding = equipment.order_bindings.get(alias)
        if binding is None or self._equipments.order_category(equipment, binding) not in TOGGLE_CATEGORIES:
            return None
        for data_alias in equipment.data_bindings:
            datum = self._equipments.datum_of(equipment, data_alias)
            if datum is not None and datum.category == "light_state":
                return data_alias
        return "state" if "state" in equipment.data_bindings else None

    def _on_sent(self, equipment: Equipment, alias: str, value: Any, source: dict[str, Any]) -> None:
        previous = self.pending(equipment.id, alias)
        if previous is not None and source.get("kind") == "external" and source.get("channel") == RETRY_SOURCE["channel"]:
            # our own re-send: wait again on the same entry (retried stays set: one retry only)
            previous.unconfirmed = False
            self._arm(previous)
            self._check_now(equipment, previous)
            return
        if previous is not None:
            self._cancel_timer(previous)
            self._drop(previous)
        mirror = self.mirror_of(equipment, alias)
        datum = self._equipments.datum_of(equipment, mirror) if mirror else None
        if mirror is None or datum is None or not comparable(value, datum.enum_values):
            if previous is not None and previous.alarm_raised:
                self._alarms.resolve(previous.alarm_id, f"Order confirmation no longer awaited: {equipment.name} {alias}")
            return
        order = self._equipments.order_of(equipment, alias)
        entry = Pending(equipment.id, alias, mirror, value, [order.device.id] if order is not None else [])
        # A newer order carries the alarm of the one it replaces: "resolved" must mean the
        # equipment reported the ordered value, not that someone tried again.
        entry.alarm_raised = previous is not None and previous.alarm_raised
        self._pending.setdefault(equipment.id, {})[alias] = entry
        if self._check_now(equipment, entry):
            return
        if self._all_offline(entry):
            entry.offline_at_send = True
            if time.monotonic() >= self._settled_at or all(i in self._status_seen for i in entry.device_ids):
                self._unconfirmed(entry, "device-offline")
                return
        self._arm(entry)

    def _check_now(self, equipment: Equipment, entry: Pending) -> bool:
        """Already in the ordered state (it was, or the device answered during the send)."""
        if values_match(entry.value, equipment.data.get(entry.mirror)):
            self._confirmed(entry)
            return True
        return False

    def _all_offline(self, entry: Pending) -> bool:
        devices = [self._devices.get(i) for i in entry.device_ids]
        devices = [d for d in devices if d is not None]
        return bool(devices) and all(d.status == "offline" for d in devices)

    def _arm(self, entry: Pending) -> None:
        self._cancel_timer(entry)
        entry.timer = gevent.spawn_later(self.wait_s, self._worker.submit, self._timed_out, entry)

    @staticmethod
    def _cancel_timer(entry: Pending) -> None:
        if entry.timer is not None:
            entry.timer.kill(block=False)
            entry.timer = None

    def _timed_out(self, entry: Pending) -> None:
        entry.timer = None
        if self.pending(entry.equipment_id, entry.alias) is not entry:
            return
        self._unconfirmed(entry, "device-offline" if self._all_offline(entry) else "timeout")

    def _unconfirmed(self, entry: Pending, reason: str) -> None:
        entry.unconfirmed = True
        equipment = self._equipments.get(entry.equipment_id)
        name = equipment.name if equipment else entry.equipment_id
        log.warning("order not confirmed: %s %s -> %r (%s)", name, entry.alias, entry.value, reason)
        self._bus.emit("equipment.order.unconfirmed", equipmentId=entry.equipment_id, orderAlias=entry.alias, value=entry.value, reason=reason)
        detail = "device offline" if reason == "device-offline" else f"no state change within {self.wait_s:g} s"
        if self._alarms.raise_alarm(entry.alarm_id, "warning", ALARM_SOURCE, f"Order not confirmed: {name} {entry.alias} → {entry.value} ({detail})"):
            entry.alarm_raised = True

    def _confirmed(self, entry: Pending) -> None:
        self._cancel_timer(entry)
        self._drop(entry)
        if entry.alarm_raised:
            equipment = self._equipments.get(entry.equipment_id)
            name = equipment.name if equipment else entry.equipment_id
            self._alarms.resolve(entry.alarm_id, f"Order confirmed: {name} {entry.alias} → {entry.value}")

    def _drop(self, entry: Pending) -> None:
        entries = self._pending.get(entry.equipment_id)
        if entries is not None and entries.get(entry.alias) is entry:
            del entries[entry.alias]
            if not entries:
                del self._pending[entry.equipment_id]

    # ---- the bus -----------------------------------------------------------------------------
    def _on_data_changed(self, event: Event) -> None:
        entries = self._pending.get(event["equipmentId"])
        if not entries:
            return
        alias, value = event["alias"], event["value"]
        for entry in [e for e in entries.values() if e.mirror == alias]:
            if values_match(entry.value, value):
                self._confirmed(entry)

    def _on_status_changed(self, event: Event) -> None:
        device_id = event["deviceId"]
        if time.monotonic() < self._settled_at:
            self._status_seen.add(device_id)
        if event["status"] != "online" or not self._pending:
            return
        horizon = now_ms() - self.retry_window_s * 1000
        for entries in list(self._pending.values()):
            for entry in list(entries.values()):
                if entry.retried or not (entry.unconfirmed or entry.offline_at_send):
                    continue
                if device_id not in entry.device_ids or entry.sent_at < horizon:
                    continue
                entry.retried = True
                self._resend(entry)

    def _resend(self, entry: Pending) -> None:
        equipment = self._equipments.get(entry.equipment_id)
        order = self._equipments.order_of(equipment, entry.alias) if equipment else None
        if equipment is None or order is None or not equipment.enabled:
            return
        log.info("device back online: re-sending %s %s -> %r", equipment.name, entry.alias, entry.value)
        try:
            self._orders.send(equipment, entry.alias, order, entry.value, dict(RETRY_SOURCE))
        except Exception as error:  # the order path already raised its alarm and event
            log.warning("re-send of %s %s failed: %s", equipment.name, entry.alias, error)

    def _on_equipment_removed(self, event: Event) -> None:
        for entry in list(self._pending.get(event["equipmentId"], {}).values()):
            self._cancel_timer(entry)
            self._drop(entry)
            if entry.alarm_raised:
                self._alarms.resolve(entry.alarm_id, f"Equipment removed: {event.get('equipmentName')}")
