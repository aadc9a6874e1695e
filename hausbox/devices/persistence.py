"""How devices are kept: their description in the database, their volatile state in a snapshot file.

The database holds what describes devices (loaded once at start as plain rows). Their volatile
state (status, last seen, values and their times) lives in memory and is written by the
``SnapshotKeeper`` to a compact snapshot file (``devices/snapshot.py``) every ``FLUSH_INTERVAL_S``
when something changed, and at shutdown: about 40 KB for 500 devices, instead of rewriting most of
two tables (and their WAL) every few minutes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable, Iterable

import gevent
import gevent.event
import gevent.lock
from pony import orm

from hausbox.core.clock import now_ms
from hausbox.core.workers import in_thread
from hausbox.devices import snapshot
from hausbox.devices.device import Datum, Device, Order
from hausbox.devices.discovery import OrderSpec

log = logging.getLogger("hausbox.device-manager")

# 4 snapshots an hour of ~45 KB for 500 devices x 8 data (0.2 MB/h; every 5 minutes it was most of
# the 2 MB/h the box may write): what a power cut or kill -9 loses (at most this long of changes)
# comes back with the devices' next messages; a clean stop writes it all.
FLUSH_INTERVAL_S = 900.0
STOP_WAIT_S = 30.0  # for a snapshot being written when the engine stops
STATUSES = ("online", "offline", "unknown")


def _json_column(text: str | None) -> Any:
    return json.loads(text) if text else None


def load_devices(db: orm.Database) -> list[Device]:
    """Every device with its data and orders, as the database describes them (status unknown)."""
    # Plain rows, not ORM objects: hydrating thousands of Pony entities was half a second of boot.
    devices: dict[str, Device] = {}
    with orm.db_session:
        for (id_, integration_id, source_id, name, customised, manufacturer, model, ieee, zone_id, source, power_source,
             raw_expose, created_at, updated_at) in db.select(
            "SELECT id, integration_id, source_device_id, name, name_customised, manufacturer, model, ieee_address,"
            " zone_id, source, power_source, raw_expose, created_at, updated_at FROM devices"
        ):  # fmt: skip
            device = Device(
                id=id_, integration_id=integration_id, source_device_id=source_id, name=name, name_customised=bool(customised),
                manufacturer=manufacturer, model=model, ieee_address=ieee, zone_id=zone_id, source=source,
                power_source=power_source, raw_expose=_json_column(raw_expose), created_at=created_at, updated_at=updated_at,
            )  # fmt: skip
            device.status = "unknown"
            devices[id_] = device
        for id_, device_id, key, type_, category, unit, enum_values in db.select(
            "SELECT id, device_id, key, type, category, unit, enum_values FROM device_data"
        ):
            device = devices.get(device_id)
            if device is not None:
                device.data[key] = Datum(id_, device, key, type_, category, unit, _json_column(enum_values))
        for id_, device_id, key, type_, category, low, high, enum_values, unit, dispatch, value_schema in db.select(
            "SELECT id, device_id, key, type, category, min_value, max_value, enum_values, unit, dispatch_config, value_schema FROM device_orders"
        ):
            device = devices.get(device_id)
            if device is not None:
                spec = OrderSpec(key, type_, category, low, high, _json_column(enum_values), unit, _json_column(dispatch) or {}, _json_column(value_schema))
                device.orders[key] = Order(id_, device, spec)
    return list(devices.values())


def restore(by_id: dict[str, Device], states: dict[str, snapshot.DeviceState]) -> int:
    """Overlay saved volatile state on the devices and data that still exist; returns how many were gone."""
    stale = 0
    for device_id, state in states.items():
        device = by_id.get(device_id)
        if device is None:
            stale += 1  # removed after the state was saved
            continue
        if state.status in STATUSES:
            device.status = state.status
        device.last_seen = state.last_seen
        for key, (value, last_updated, last_changed) in state.data.items():
            datum = device.data.get(key)
            if datum is None:
                stale += 1
            else:
                datum.value, datum.last_updated, datum.last_changed = datum.masked(value), last_updated, last_changed
    return stale


class SnapshotKeeper:
    """Writes the devices' volatile state to the snapshot file when it changed: periodically and at stop.

    The hot path only bumps ``changes`` (one integer increment); a flush with nothing new writes nothing.
    """

    def __init__(self, path: Path, devices: Callable[[], Iterable[Device]]):
        self.path = path
        self.changes = 0
        self._devices = devices
        self._persisted = 0  # the count of changes the last snapshot written holds
        self._write_lock = gevent.lock.Semaphore()
        self._stopping = gevent.event.Event()
        self._flusher: gevent.Greenlet | None = None

    def start(self) -> None:
        self._stopping.clear()
        self._flusher = gevent.spawn(self._flush_loop)

    def stop(self) -> None:
        if self._flusher is not None:
            self._stopping.set()
            self._flusher.join(STOP_WAIT_S)  # a snapshot under way is finished, not cut
            if not self._flusher.dead:
                self._flusher.kill(block=False)
                log.error("a device state snapshot still being written after %.0f s: not writing another", STOP_WAIT_S)
                return
            self._flusher = None
        try:
            self.flush()
        except Exception:
            log.exception("could not write the device state snapshot at stop (the previous one is kept)")

    def _flush_loop(self) -> None:
        while not self._stopping.wait(FLUSH_INTERVAL_S):
            try:
                self.flush()
            except Exception:
                log.exception("could not write the device state snapshot (values kept in memory, retried next round)")

    def flush(self) -> bool:
        """Write the snapshot of every device's volatile state, if any changed since the last one."""
        with self._write_lock:
            changes = self.changes
            if changes == self._persisted:
                return False
            self._write_snapshot()
            self._persisted = changes
            return True

    def write_now(self) -> None:
        """Write the snapshot whatever changed (raises on failure)."""
        with self._write_lock:
            changes = self.changes
            self._write_snapshot()
            self._persisted = changes

    def _write_snapshot(self) -> int:
        """Encode here (a consistent view: no other greenlet runs meanwhile); compress and write in a
        thread, so that an SD card's slow fsync does not pause the message path."""
        states: dict[str, snapshot.DeviceState] = {}
        for device in self._devices():
            data = {
                datum.key: (datum.reported(), datum.last_updated, datum.last_changed)
                for datum in device.data.values()
                if datum.last_updated is not None or datum.value is not None or datum.last_changed is not None
            }
            if data or device.last_seen is not None or device.status != "unknown":
                states[device.id] = snapshot.DeviceState(device.status, device.last_seen, data)
        body = snapshot.encode(states, now_ms())
        size = in_thread(snapshot.write, self.path, body)
        log.debug("device state snapshot: %d devices, %d bytes", len(states), size)
        return size
