"""The history writer: equipment values in, raw points out, in batches.

The bus handler that feeds it only decides, in memory, whether the binding is historized and
enqueues; the write filter, the buffer and the store run in the ``history`` worker's greenlet. The
buffer is committed in one transaction every commit interval (``history.commitIntervalSeconds``),
and by ``final_write`` at shutdown, so SIGTERM loses nothing and kill -9 at most one interval.
A failed commit (a full disk) raises an alarm and keeps the points in memory, up to a bound.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from hausbox.core.bus import Event
from hausbox.core.clock import Clock, parse_iso
from hausbox.core.storage import is_storage_full
from hausbox.core.workers import Worker
from hausbox.history import rules
from hausbox.history.store import HistoryStore, Point

log = logging.getLogger("hausbox.history")

COMMIT_INTERVAL_KEY = "history.commitIntervalSeconds"
MIN_WRITE_KEY = "history.minWriteInterval"
MAX_WRITE_KEY = "history.maxWriteInterval"
DEFAULT_COMMIT_INTERVAL_S = 5.0
MAX_COMMIT_INTERVAL_S = 300.0
MAX_BUFFERED = 200_000  # points kept in memory while the store refuses them (~30 MB at worst)
ALARM_ID = "history-write"


def check_commit_interval(value: Any) -> None:
    """The setting's validator: a number of seconds in [1, 300]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= MAX_COMMIT_INTERVAL_S:
        raise ValueError(f"must be a number of seconds between 1 and {MAX_COMMIT_INTERVAL_S:g}")


def check_write_interval(value: Any) -> None:
    """The validator of the write filter's intervals: milliseconds, 0 to a day."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 86_400_000:
        raise ValueError("must be a whole number of milliseconds between 0 and 86400000")


class Last24h:
    """Counts per hour, summed over the last 24 hours (the status route's stats)."""

    def __init__(self) -> None:
        self._hours: dict[int, int] = {}

    def add(self, now_ms: int, count: int = 1) -> None:
        hour = now_ms // 3_600_000
        self._hours[hour] = self._hours.get(hour, 0) + count
        for old in [h for h in self._hours if h <= hour - 24]:
            del self._hours[old]

    def total(self, now_ms: int) -> int:
        hour = now_ms // 3_600_000
        return sum(count for h, count in self._hours.items() if h > hour - 24)


class HistoryWriter:
    def __init__(self, store: HistoryStore, worker: Worker, clock: Clock, settings: Any, equipments: Any, alarms: Any, storage_full: Callable[[], None]):
        self.store = store
        self._worker = worker
        self._clock = clock
        self._settings = settings
        self._equipments = equipments
        self._alarms = alarms
        self._storage_full = storage_full
        self._filter = rules.WriteFilter()
        self._buffer: list[Point] = []
        self._timer: Any = None
        self.written = Last24h()
        self.errors = Last24h()
        self.connected = True  # the last commit succeeded
        self.dropped = 0
        worker.on("equipment.data.changed", self._take, accept=self._historized)
        worker.on("equipment.removed", lambda event: self._filter.forget(event["equipmentId"]))

    # ---- the bus side: in memory, never waits ---------------------------------------------------
    def _historized(self, event: Event) -> bool:
        equipment = self._equipments.get(event["equipmentId"])
        if equipment is None or equipment.enabled is False:
            return False
        binding = equipment.data_bindings.get(event["alias"])
        if binding is None:
            return False
        datum = self._equipments.datum_of(equipment, binding.alias)
        return rules.is_historized(binding.historize, binding.alias, datum.category if datum else None)

    # ---- the worker side ----------------------------------------------------------------------------
    def _take(self, event: Event) -> None:
        value = rules.numeric_value(event["value"])
        if value is None:
            return  # text values wait for a later slice (the store keeps REALs)
        equipment = self._equipments.get(event["equipmentId"])
        datum = self._equipments.datum_of(equipment, event["alias"]) if equipment else None
        category = datum.category if datum else None
        ts = self._source_ms(event.get("sourceTimestamp"))
        if ts is None:
            ts = self._clock.now_ms()
            if not self._passes(event, value, category, ts):
                return  # the filter is skipped for values that carry their own time, as the digest says
        self._buffer.append((event["equipmentId"], event["alias"], ts, value))

    @staticmethod
    def _source_ms(text: str | None) -> int | None:
        try:
            return parse_iso(text) if text else None
        except ValueError:
            return None

    def _passes(self, event: Event, value: float, category: str | None, now_ms: int) -> bool:
        self._filter.min_interval_ms = int(self._settings.get(MIN_WRITE_KEY, rules.MIN_WRITE_INTERVAL_MS))
        self._filter.max_interval_ms = int(self._settings.get(MAX_WRITE_KEY, rules.MAX_WRITE_INTERVAL_MS))
        discrete = not isinstance(event["value"], (int, float)) or isinstance(event["value"], bool)
        return self._filter.accept((event["equipmentId"], event["alias"]), value, category, now_ms, discrete)

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
        """``GET /history/status``: the digest's shape, plus the points waiting in memory."""
        now = self._clock.now_ms()
        return {
            "configured": True, "connected": self.connected, "enabled": True, "historizedBindings": self.historized_bindings(),
            "stats": {"pointsWritten24h": self.written.total(now), "errors24h": self.errors.total(now), "pendingPoints": len(self._buffer)},
        }  # fmt: skip

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def commit(self) -> None:
        """Write the buffer in one transaction; on failure keep it (bounded) and raise the alarm."""
        if not self._buffer:
            return
        points, self._buffer = self._buffer, []
        try:
            self.store.write(points)
        except Exception as error:  # noqa: BLE001 -- a failed write must never stop the engine
            self._failed(points, error)
            return
        self.written.add(self._clock.now_ms(), len(points))
        self.connected = True
        self._alarms.resolve(ALARM_ID, "History points are written again")

    def _failed(self, points: list[Point], error: Exception) -> None:
        self.errors.add(self._clock.now_ms())
        self.connected = False
        self._buffer = points + self._buffer
        overflow = len(self._buffer) - MAX_BUFFERED
        if overflow > 0:
            self.dropped += overflow
            del self._buffer[:overflow]  # the oldest go first
        if is_storage_full(error):
            self._storage_full()
        log.error("history: %d point(s) not written, kept in memory: %s", len(self._buffer), error)
        self._alarms.raise_alarm(ALARM_ID, "error", "history", f"History points cannot be written ({error}); {len(self._buffer)} kept in memory")

    # ---- the commit interval --------------------------------------------------------------------------
    def start(self) -> None:
        self._schedule()

    def _schedule(self) -> None:
        seconds = float(self._settings.get(COMMIT_INTERVAL_KEY, DEFAULT_COMMIT_INTERVAL_S))
        self._timer = self._clock.call_later(seconds, self._tick)

    def _tick(self) -> None:
        self._worker.submit(self.commit)
        self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def final_write(self) -> None:
        """After the workers drained and stopped: commit what is left, then close the file."""
        self.stop()
        self.commit()
        self.store.close()
