"""The device manager: every device, its data and orders, in memory; persisted in batches.

Integrations call ``upsert_from_discovery``, ``remove_stale``, ``update_data`` and
``update_status`` (the device half of the plugin API). ``update_data`` is the hot path of the whole
engine: it touches no database and emits ``device.data.updated`` only for values that changed
(or for the categories where a repeat is news: a second button press, a new detection).
How devices are loaded and their volatile state kept on disk is ``devices/persistence.py``.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable

from pony import orm

from hausbox.core.bus import EventBus
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.errors import BadRequest, NotFound
from hausbox.core.jsonenc import join_array
from hausbox.core.values import problem
from hausbox.devices import handover, persistence, snapshot
from hausbox.devices.categories import (
    CATEGORY_UNITS,
    KEY_CATEGORIES,
    repeat_is_news,
    type_of_value,
)
from hausbox.devices.device import Datum, Device, Order, stable_id
from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec
from hausbox.devices.values import coerce

log = logging.getLogger("hausbox.device-manager")

HEARTBEAT_MIN_INTERVAL_MS = 5_000
_REFUSED_LOGGED_LIMIT = 1000


class DeviceManager:
    def __init__(self, db: orm.Database, bus: EventBus, zone_exists: Callable[[str], bool], *, state_path: Path):
        self._db = db
        self._bus = bus
        self._zone_exists = zone_exists
        self._by_id: dict[str, Device] = {}
        self._membership = 0  # bumped when devices come or go
        self._list_cache: tuple[tuple[int, int], bytes] | None = None
        self._by_source: dict[tuple[str, str], Device] = {}
        self._data: dict[str, Datum] = {}
        self._orders: dict[str, Order] = {}
        self._refused: set[tuple[str, str]] = set()  # (device, key) of values refused, logged once
        # Volatile state: the hot path counts changes (one increment); the keeper writes the snapshot.
        self._state = persistence.SnapshotKeeper(state_path, lambda: self._by_id.values())
        # Called with the ids of data and orders that no longer exist (bindings on them cascade away).
        self._removal_listeners: list[Callable[[set[str], set[str]], None]] = []
        self._load()

    def on_removed(self, listener: Callable[[set[str], set[str]], None]) -> None:
        self._removal_listeners.append(listener)

    def _removed(self, data_ids: set[str], order_ids: set[str]) -> None:
        if data_ids or order_ids:
            for listener in self._removal_listeners:
                listener(data_ids, order_ids)

    # ---- loading and persistence -------------------------------------------------------------
    def _load(self) -> None:
        for device in persistence.load_devices(self._db):
            self._index(device)
            for datum in device.data.values():
                self._data[datum.id] = datum
            for order in device.orders.values():
                self._orders[order.id] = order
        with orm.db_session:
            handed_over = handover.read(self._db)
        if handed_over is not None:
            self._restore(handed_over)
        saved = snapshot.read(self._state.path)
        if saved is not None:
            self._restore(saved)  # written after any handover: the newer values
        if handed_over is not None:
            handover.finish(self._db, self._state.write_now, self._state.path.name)

    def _restore(self, states: dict[str, snapshot.DeviceState]) -> None:
        if persistence.restore(self._by_id, states):
            self._state.changes += 1  # the next snapshot leaves the gone ones out

    def _index(self, device: Device) -> None:
        self._membership += 1
        self._by_id[device.id] = device
        self._by_source[(device.integration_id, device.source_device_id)] = device

    def start(self) -> None:
        self._state.start()

    def stop(self) -> None:
        self._state.stop()

    def flush(self) -> bool:
        """Write the snapshot of every device's volatile state, if any changed since the last one."""
        return self._state.flush()

    # ---- reads -------------------------------------------------------------------------------
    def get(self, device_id: str) -> Device | None:
        return self._by_id.get(device_id)

    def require(self, device_id: str) -> Device:
        device = self._by_id.get(device_id)
        if device is None:
            raise NotFound(f"Device not found: {device_id}")
        return device

    def find(self, integration_id: str, source_device_id: str) -> Device | None:
        return self._by_source.get((integration_id, source_device_id))

    def all(self) -> list[Device]:
        return sorted(self._by_id.values(), key=lambda d: (d.name.lower(), d.id))

    def list_bytes(self) -> bytes:
        """``GET /devices``, encoded; rebuilt only after some device changed or came or went."""
        key = (Device.changes, self._membership)
        cached = self._list_cache
        if cached is None or cached[0] != key:
            cached = self._list_cache = (key, join_array([device.json_bytes() for device in self.all()]))
        return cached[1]

    def of_integration(self, integration_id: str) -> list[Device]:
        return [d for d in self._by_id.values() if d.integration_id == integration_id]

    def datum(self, datum_id: str) -> Datum | None:
        return self._data.get(datum_id)

    def order(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)

    def counts(self, integration_id: str | None = None) -> dict[str, int]:
        counts = {"total": 0, "online": 0, "offline": 0, "unknown": 0}
        for device in self._by_id.values():
            if integration_id is None or device.integration_id == integration_id:
                counts["total"] += 1
                counts[device.status] += 1
        return counts

    # ---- the plugin API: discovery -----------------------------------------------------------
    def upsert_from_discovery(self, integration_id: str, source: str, found: DiscoveredDevice) -> Device:
        """Create or update a device and its data and orders; ids of kept keys never change."""
        device = self._by_source.get((integration_id, found.source_device_id))
        if device is None and found.ieee_address:
            # Renamed in the integration (same radio address): keep the device and its bindings.
            device = next(
                (d for d in self._by_id.values() if d.integration_id == integration_id and d.ieee_address == found.ieee_address),
                None,
            )
        if device is not None and self._unchanged(device, found):
            return device  # a resync that changes nothing writes nothing (500 devices at every boot)
        stamp = now_ms()
        created = device is None
        with orm.db_session:
            if created:
                device = Device(
                    id=str(uuid.uuid4()), integration_id=integration_id, source_device_id=found.source_device_id,
                    name=found.name or found.source_device_id, name_customised=False, status="unknown",
                    source=source, created_at=stamp,
                )  # fmt: skip
                row = self._db.Device(
                    id=device.id, integration_id=integration_id, source_device_id=found.source_device_id,
                    name=device.name, source=source, created_at=stamp, updated_at=stamp,
                )  # fmt: skip
            else:
                row = self._db.Device[device.id]
                del self._by_source[(device.integration_id, device.source_device_id)]
                if not device.name_customised:
                    device.name = row.name = found.name or found.source_device_id
            device.source_device_id = row.source_device_id = found.source_device_id
            device.manufacturer = row.manufacturer = found.manufacturer
            device.model = row.model = found.model
            device.ieee_address = row.ieee_address = found.ieee_address
            device.power_source = row.power_source = found.power_source
            device.raw_expose = row.raw_expose = found.raw_expose
            device.updated_at = row.updated_at = stamp
            self._sync_data(device, found.data)
            self._sync_orders(device, found.orders)
        self._index(device)
        device.touched()
        if created:
            log.info("discovered %s device %s", integration_id, device.name)
            self._bus.emit("device.discovered", device=device.to_json())
        return device

    @staticmethod
    def _unchanged(device: Device, found: DiscoveredDevice) -> bool:
        """Whether rediscovery would leave the device exactly as it is."""
        if device.source_device_id != found.source_device_id:
            return False
        if not device.name_customised and device.name != (found.name or found.source_device_id):
            return False
        known = (device.manufacturer, device.model, device.ieee_address, device.power_source, device.raw_expose)
        if known != (found.manufacturer, found.model, found.ieee_address, found.power_source, found.raw_expose):
            return False
        data = {k: (d.type, d.category, d.unit, d.enum_values) for k, d in device.data.items()}
        if data != {s.key: (s.type, s.category, s.unit, s.enum_values) for s in found.data}:
            return False
        orders = {k: (o.type, o.category, o.min, o.max, o.enum_values, o.unit, o.dispatch_config, o.value_schema) for k, o in device.orders.items()}
        return orders == {s.key: (s.type, s.category, s.min, s.max, s.enum_values, s.unit, s.dispatch_config or {}, s.value_schema) for s in found.orders}

    def _sync_data(self, device: Device, specs: Iterable[DataSpec]) -> None:
        wanted = {spec.key: spec for spec in specs}
        gone = {device.data[k].id for k in device.data if k not in wanted}
        for key in [k for k in device.data if k not in wanted]:
            self._db.DeviceData[device.data[key].id].delete()
            del self._data[device.data.pop(key).id]
        if gone:
            self._state.changes += 1  # a key declared again later starts without the old value
        self._removed(gone, set())
        for key, spec in wanted.items():
            datum = device.data.get(key)
            if datum is None:
                datum = Datum(stable_id(device.id, "data", key), device, key, spec.type, spec.category, spec.unit, spec.enum_values)
                device.data[key] = self._data[datum.id] = datum
                self._db.DeviceData(id=datum.id, device_id=device.id, key=key, type=spec.type, category=spec.category, unit=spec.unit, enum_values=spec.enum_values)
            else:
                datum.type, datum.category, datum.unit, datum.enum_values = spec.type, spec.category, spec.unit, spec.enum_values
                row = self._db.DeviceData[datum.id]
                row.type, row.category, row.unit, row.enum_values = spec.type, spec.category, spec.unit, spec.enum_values

    def _sync_orders(self, device: Device, specs: Iterable[OrderSpec]) -> None:
        wanted = {spec.key: spec for spec in specs}
        gone = {device.orders[k].id for k in device.orders if k not in wanted}
        for key in [k for k in device.orders if k not in wanted]:
            self._db.DeviceOrder[device.orders[key].id].delete()
            del self._orders[device.orders.pop(key).id]
        self._removed(set(), gone)
        for key, spec in wanted.items():
            order_id = stable_id(device.id, "order", key)
            order = Order(order_id, device, spec)
            fields = dict(
                type=spec.type, category=spec.category, min_value=spec.min, max_value=spec.max,
                enum_values=spec.enum_values, unit=spec.unit, dispatch_config=spec.dispatch_config or {},
                value_schema=spec.value_schema,
            )  # fmt: skip
            row = self._db.DeviceOrder.get(id=order_id)
            if row is None:
                self._db.DeviceOrder(id=order_id, device_id=device.id, key=key, **fields)
            else:
                row.set(**fields)
            device.orders[key] = self._orders[order_id] = order

    def remove_stale(self, integration_id: str, present: set[str]) -> int:
        """Delete this integration's devices not in ``present``; an empty list deletes nothing."""
        if not present:
            return 0
        stale = [d for d in self.of_integration(integration_id) if d.source_device_id not in present]
        for device in stale:
            self.delete(device.id)
        return len(stale)

    # ---- the plugin API: live data -----------------------------------------------------------
    def update_data(self, integration_id: str, source_device_id: str, payload: dict[str, Any], source_timestamp: str | None = None) -> None:
        device = self._by_source.get((integration_id, source_device_id))
        if device is None:
            return
        now = now_ms()
        device.last_seen = now
        device.touched()
        self._state.changes += 1
        if device.status != "online":
            self._set_status(device, "online")
        emit = self._bus.emit
        if now - device.heartbeat_at >= HEARTBEAT_MIN_INTERVAL_MS:
            device.heartbeat_at = now
            emit("device.heartbeat", deviceId=device.id, timestamp=iso_utc(now))
        timestamp = None
        for key, raw in payload.items():
            datum = device.data.get(key)
            if datum is None:
                datum = self._learn(device, key, raw)
                if datum is None:
                    continue
            value = coerce(datum.type, raw)
            if problem(value) is not None:
                self._refuse(device, key, value)
                continue
            value = datum.masked(value)  # a URL's credentials never leave the datum (after the check: a refused value keeps none)
            previous = datum.value
            datum.last_updated = now
            if value == previous and type(value) is type(previous):
                if not repeat_is_news(datum.category, datum.unit):
                    continue
            else:
                datum.value = value
                datum.last_changed = now
            if timestamp is None:
                timestamp = iso_utc(now)
            event = {"deviceId": device.id, "deviceName": device.name, "dataId": datum.id, "key": key, "value": value, "previous": previous, "timestamp": timestamp}
            if source_timestamp is not None:
                event["sourceTimestamp"] = source_timestamp
            emit("device.data.updated", **event)

    def _refuse(self, device: Device, key: str, value: Any) -> None:
        """A reported value we could not store or encode back (an integer beyond 64 bits, a lone
        surrogate, nesting too deep): not kept, logged once per datum."""
        logged = (device.id, key)
        if logged not in self._refused and len(self._refused) < _REFUSED_LOGGED_LIMIT:
            self._refused.add(logged)
            log.warning("device %s reported a value of %s that cannot be kept: %s", device.name, key, problem(value, key))

    def _learn(self, device: Device, key: str, value: Any) -> Datum | None:
        """A key never declared: kept only when it is a well-known one (battery, temperature ...)."""
        category = KEY_CATEGORIES.get(key)
        if category is None or value is None:
            return None
        spec = DataSpec(key, type_of_value(value), category, CATEGORY_UNITS.get(category))  # type: ignore[arg-type]
        with orm.db_session:
            self._sync_data(device, [*(DataSpec(d.key, d.type, d.category, d.unit, d.enum_values) for d in device.data.values()), spec])  # type: ignore[arg-type]
        return device.data.get(key)

    def update_status(self, integration_id: str, source_device_id: str, status: str) -> None:
        device = self._by_source.get((integration_id, source_device_id))
        if device is None or status not in persistence.STATUSES:
            return
        if status == "online":
            device.last_seen = now_ms()
            device.touched()
            self._state.changes += 1
        if device.status != status:
            self._set_status(device, status)

    def _set_status(self, device: Device, status: str) -> None:
        device.status = status
        device.touched()
        self._state.changes += 1
        self._bus.emit("device.status_changed", deviceId=device.id, deviceName=device.name, status=status)

    # ---- user-facing changes -----------------------------------------------------------------
    def update(self, device_id: str, name: str | None = None, zone_id: Any = ...) -> dict[str, Any]:
        device = self.require(device_id)
        if name is None and zone_id is ...:
            raise BadRequest("No update fields provided. Use 'name' and/or 'zoneId'.")
        if zone_id is not ... and zone_id is not None and not self._zone_exists(zone_id):
            raise BadRequest(f"Zone not found: {zone_id}")
        with orm.db_session:
            row = self._db.Device[device_id]
            if name is not None:
                device.name = row.name = name.strip()
                device.name_customised = row.name_customised = True
            if zone_id is not ...:
                device.zone_id = row.zone_id = zone_id
            device.updated_at = row.updated_at = now_ms()
        device.touched()
        return device.to_json()

    def delete(self, device_id: str) -> None:
        device = self.require(device_id)
        with orm.db_session:
            self._db.Device[device_id].delete()
        for datum in device.data.values():
            self._data.pop(datum.id, None)
        for order in device.orders.values():
            self._orders.pop(order.id, None)
        del self._by_id[device_id]
        self._state.changes += 1  # the next snapshot leaves it out
        self._membership += 1
        self._by_source.pop((device.integration_id, device.source_device_id), None)
        self._removed({d.id for d in device.data.values()}, {o.id for o in device.orders.values()})
        log.info("removed device %s", device.name)
        self._bus.emit("device.removed", deviceId=device_id, deviceName=device.name)

    def raw(self, device_id: str) -> dict[str, Any]:
        device = self.require(device_id)
        return {"deviceId": device.id, "name": device.name, "sourceDeviceId": device.source_device_id, "expose": device.raw_expose}
