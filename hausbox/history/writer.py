"""The history writer: equipment values in, raw points out, in batches.

The bus handler that feeds it only looks up, in a cache, what the binding is to the history
(historized, an energy meter, or nothing) and enqueues the value with that route; the write
filter, the meters' arbiter, the buffer and the store run in the ``history`` worker's greenlet.
The cache is emptied when an equipment or a device changes, so a decision never outlives what it
was made from. The
buffer is committed every commit interval (``history.commitIntervalSeconds``): appended to the
store's journal, durable at once; the store moves the journal into SQLite every
``FLUSH_INTERVAL_S`` and by ``final_write`` at shutdown, so SIGTERM loses nothing and kill -9 at
most one commit interval. A failed commit or flush (a full disk) raises an alarm and keeps the
points in memory, up to a bound.

An energy reading is counted by the meters' arbiter before the write filter looks at it, so the
energy sums (Wh per local hour and day, split peak/off-peak by the tariff at the reading's time)
hold every reading, including those the filter keeps out of the raw points.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, parse_iso
from hausbox.core.storage import is_storage_full
from hausbox.core.workers import Worker
from hausbox.history import buckets, rules
from hausbox.history.counts import Last24h
from hausbox.history.meters import MeterArbiter
from hausbox.history.batch import Batch, Key
from hausbox.history.store import TIERS, HistoryStore

log = logging.getLogger("hausbox.history")

COMMIT_INTERVAL_KEY = "history.commitIntervalSeconds"
MIN_WRITE_KEY = "history.minWriteInterval"
MAX_WRITE_KEY = "history.maxWriteInterval"
DEFAULT_COMMIT_INTERVAL_S = 5.0
MAX_COMMIT_INTERVAL_S = 300.0
MAX_BUFFERED = 200_000  # points kept in memory while the store refuses them (~30 MB at worst)
FLUSH_INTERVAL_S = 1800  # journaled points move into SQLite this often (see store.py: why)
MAX_PENDING = 20_000  # or as soon as this many wait
ALARM_ID = "history-write"


def check_commit_interval(value: Any) -> None:
    """The setting's validator: a number of seconds in [1, 300]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= MAX_COMMIT_INTERVAL_S:
        raise ValueError(f"must be a number of seconds between 1 and {MAX_COMMIT_INTERVAL_S:g}")


def check_write_interval(value: Any) -> None:
    """The validator of the write filter's intervals: milliseconds, 0 to a day."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 86_400_000:
        raise ValueError("must be a whole number of milliseconds between 0 and 86400000")


_STRUCTURE_EVENTS = ("equipment.created", "equipment.updated", "equipment.removed", "device.discovered", "device.removed")


@dataclass(frozen=True)
class Route:
    """What one binding is to the history, decided once per structure change."""

    historized: bool
    meter: bool
    category: str | None
    unit: str | None
    zone_id: str | None
    equipment_type: str | None
    source: str  # the device datum bound: a meter's baseline belongs to it


class HistoryWriter:
    def __init__(
        self, store: HistoryStore, worker: Worker, bus: EventBus, clock: Clock, settings: Any, equipments: Any, alarms: Any,
        storage_full: Callable[[], None], split: Callable[[float, int], tuple[float, float]], export: Any = None,
    ):  # fmt: skip
        self.store = store
        self._worker = worker
        self._clock = clock
        self._settings = settings
        self._equipments = equipments
        self._alarms = alarms
        self._storage_full = storage_full
        self._split = split
        self.export = export
        self._filter = rules.WriteFilter()
        self._read_settings()
        self.meters = MeterArbiter(store.meter_baselines(), clock.now_ms())
        self._routes: dict[Key, Route | None] = {}
        self._batch = Batch()
        self._exports: list[tuple] = []
        self._timer: Any = None  # the next commit, armed while points wait (see _arm)
        self._running = False
        self.written = Last24h()
        self.errors = Last24h()
        self.connected = True  # the last commit succeeded
        self._flushed_at = clock.now_ms()
        self.dropped = 0
        for event_type in _STRUCTURE_EVENTS:
            bus.on(event_type, self._structure_changed)
        bus.on("equipment.data.changed", self._routed)
        worker.on("equipment.removed", self._removed)
        worker.on("settings.changed", self._settings_changed)

    # ---- the bus side: in memory, never waits ---------------------------------------------------
    def _routed(self, event: Event) -> None:
        """Hand the value to the worker with its route as it is now: a value the old meter sent just
        before its binding moved to a new one must not count against the new one's baseline."""
        key = (event["equipmentId"], event["alias"])
        route = self._routes.get(key, False)
        if route is False:
            route = self._routes[key] = self._route(key)
        if route is not None:
            self._worker.submit(self._take, event, route)

    def _structure_changed(self, event: Event) -> None:
        self._routes.clear()

    def _route(self, key: Key) -> Route | None:
        equipment = self._equipments.get(key[0])
        if equipment is None or equipment.enabled is False:
            return None
        binding = equipment.data_bindings.get(key[1])
        if binding is None:
            return None
        datum = self._equipments.datum_of(equipment, binding.alias)
        category = datum.category if datum else None
        historized = rules.is_historized(binding.historize, binding.alias, category)
        meter = rules.is_meter(binding.alias, category)
        if not (historized or meter):
            return None
        return Route(historized, meter, category, datum.unit if datum else None, equipment.zone_id, equipment.type, binding.device_data_id)

    # ---- the worker side ----------------------------------------------------------------------------
    def _read_settings(self) -> None:
        self._filter.min_interval_ms = int(self._settings.get(MIN_WRITE_KEY, rules.MIN_WRITE_INTERVAL_MS))
        self._filter.max_interval_ms = int(self._settings.get(MAX_WRITE_KEY, rules.MAX_WRITE_INTERVAL_MS))

    def _settings_changed(self, event: Event) -> None:
        self._read_settings()
        if COMMIT_INTERVAL_KEY in event.get("keys", ()) and self._timer is not None:
            self._timer.cancel()
            self._schedule()  # a shorter interval takes effect now, not after the longer one ends

    def _removed(self, event: Event) -> None:
        self._filter.forget(event["equipmentId"])
        self.meters.forget(event["equipmentId"])

    def _take(self, event: Event, route: Route) -> None:
        self._buffer(event, route)
        if self._timer is None and not self._batch.empty():
            self._arm()

    def _buffer(self, event: Event, route: Route) -> None:
        key = (event["equipmentId"], event["alias"])
        value = event["value"]
        source_ms = self._source_ms(event.get("sourceTimestamp"))
        ts = source_ms if source_ms is not None else self._clock.now_ms()
        if source_ms is not None and source_ms < self._clock.now_ms() - TIERS["raw"] + buckets.HOUR_MS:
            return  # older than the raw tier keeps: its hour may be made from points already expired
        if route.meter:
            self._count_energy(key, route, value, ts)
        if not route.historized or value is None:
            return
        number = rules.numeric_value(value)
        discrete = not isinstance(value, (int, float)) or isinstance(value, bool)
        kept = number if number is not None else value if isinstance(value, str) else None
        if kept is None:
            return  # a list or an object: not a time series
        if source_ms is None and not self._filter.accept(key, kept, route.category, ts, discrete):
            return  # the filter is skipped for values that carry their own time, as the digest says
        if number is not None:
            self._batch.points.append((key[0], key[1], ts, number))
        else:
            self._batch.texts.append((key[0], key[1], ts, value))
        if self.export is not None and self.export.active():
            self._exports.append((key[0], key[1], route.category, route.zone_id, route.equipment_type, ts, value))

    def _count_energy(self, key: Key, route: Route, value: Any, ts: int) -> None:
        wh, baseline = self.meters.consumed(key, value, route.unit, ts, route.source)
        if baseline is not None:
            self._batch.meters[key] = baseline
        if wh > 0:
            tz = self._clock.tz
            hp, hc = self._split(wh, ts)
            self._batch.add_energy(key, buckets.hour_start(ts, tz), buckets.day_start(ts, tz), hp, hc)

    @staticmethod
    def _source_ms(text: str | None) -> int | None:
        try:
            return parse_iso(text) if text else None
        except ValueError:
            return None

    def historized_bindings(self) -> int:
        """How many data bindings of enabled equipments the rules historize."""
        count = 0
        for equipment in self._equipments.all():
            if equipment.enabled is False:
                continue
            for binding in equipment.data_bindings.values():
                datum = self._equipments.datum_of(equipment, binding.alias)
                count += rules.is_historized(binding.historize, binding.alias, datum.category if datum else None)
        return count

    def status(self) -> dict[str, Any]:
        """``GET /history/status``: the digest's shape, plus the points waiting in memory and the export."""
        now = self._clock.now_ms()
        body = {
            "configured": True, "connected": self.connected, "enabled": True, "historizedBindings": self.historized_bindings(),
            "stats": {"pointsWritten24h": self.written.total(now), "errors24h": self.errors.total(now), "pendingPoints": self.pending, "droppedPoints": self.dropped},
        }  # fmt: skip
        if self.export is not None:
            body["export"] = self.export.status()
        return body

    @property
    def pending(self) -> int:
        return len(self._batch)

    def commit(self) -> None:
        """Write the buffer in one transaction; on failure keep it (bounded) and raise the alarm."""
        if self._batch.empty():
            return
        batch, self._batch = self._batch, Batch()
        exports, self._exports = self._exports, []
        stamps = [p[2] for p in batch.points] + [p[2] for p in batch.texts]
        late = {"downsample-hourly": buckets.hour_start(min(stamps), self._clock.tz)} if stamps else None
        try:
            self.store.write(batch, late_from=late)
        except Exception as error:  # noqa: BLE001 -- a failed write must never stop the engine
            self._failed(batch, exports, error)
            return
        self.written.add(self._clock.now_ms(), len(batch))
        if exports:
            self.export.add(exports)
        if self.store.pending >= MAX_PENDING or self._clock.now_ms() - self._flushed_at >= FLUSH_INTERVAL_S * 1000:
            self.flush()
        else:
            self._healthy()

    def flush(self) -> None:
        """Move the journaled points into SQLite; on failure they stay journaled and in memory."""
        self._flushed_at = self._clock.now_ms()
        try:
            self.store.flush()
        except Exception as error:  # noqa: BLE001 -- a failed flush must never stop the engine
            self._failed(Batch(), [], error)
            return
        self._healthy()

    def _healthy(self) -> None:
        if not self.connected:
            self.connected = True
            self._alarms.resolve(ALARM_ID, "History points are written again")

    def _failed(self, batch: Batch, exports: list[tuple], error: Exception) -> None:
        self.errors.add(self._clock.now_ms())
        self.connected = False
        self._batch.merge(batch, older=True)
        self._exports[:0] = exports
        for kept in (self._batch.points, self._batch.texts, self._exports):
            overflow = len(kept) - MAX_BUFFERED
            if overflow > 0:
                self.dropped += overflow if kept is not self._exports else 0
                del kept[:overflow]  # the oldest go first; energy sums and baselines are small and kept whole
        self._arm()  # what is kept is tried again at the next interval
        if is_storage_full(error):
            self._storage_full()
        waiting = self.pending + self.store.pending
        log.error("history: %d point(s) not written, kept in memory: %s", waiting, error)
        self._alarms.raise_alarm(ALARM_ID, "error", "history", f"History points cannot be written ({error}); {waiting} kept in memory")

    # ---- the commit interval --------------------------------------------------------------------------
    # The timer is armed by the first point of a batch, not kept ticking: an idle house wakes nothing
    # every few seconds (and a test that moves a clock through weeks fires no empty commits).
    def start(self) -> None:
        self._running = True
        if not self._batch.empty():
            self._arm()

    def _arm(self) -> None:
        if self._running and self._timer is None:
            self._schedule()

    def _schedule(self) -> None:
        seconds = float(self._settings.get(COMMIT_INTERVAL_KEY, DEFAULT_COMMIT_INTERVAL_S))
        self._timer = self._clock.call_later(seconds, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._worker.submit(self.commit)

    def stop(self) -> None:
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def final_write(self) -> None:
        """After the workers drained and stopped: commit what is left and move it all into SQLite
        (the store is closed by its owner)."""
        self.stop()
        self.commit()
        self.flush()
