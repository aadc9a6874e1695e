"""The audit trail's recorder: requests hand it an entry, the ``audit`` worker writes them in batches.

On the request path ``note`` only builds a small tuple and appends it to a bounded buffer. A batch
is written, in one transaction, a second after the first entry of the batch or as soon as
``BATCH_SIZE`` wait; whatever is buffered is written at ``final_write``. A write that fails (the
database locked or full) keeps its entries and is tried again; past ``MAX_BUFFERED`` new entries
are dropped, counted, logged and raised as an alarm: the request never waits for the database.

Entries older than ``RETENTION_DAYS`` are deleted at start and then once a day, in chunks that let
the other greenlets run.
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import gevent
from gevent.event import AsyncResult

from hausbox.api.routing import client_address
from hausbox.audit import store
from hausbox.audit.entry import Row, action_of, agent_of, outcome_of, target_of, tried_name, who
from hausbox.core.clock import Clock, Timer
from hausbox.core.workers import Worker, in_thread, started_in_thread
from hausbox.system.alarms import Alarms

if TYPE_CHECKING:
    import bottle

    from hausbox.api.app import Seen
    from hausbox.api.routing import Route

log = logging.getLogger("hausbox.audit")

FLUSH_DELAY_S = 1.0
BATCH_SIZE = 100
MAX_BUFFERED = 20_000  # at most ~15 MB of tuples: hours of a stuck database at a busy home's pace
RETRY_DELAY_S = 5.0
FINAL_WAIT_S = 15.0  # at shutdown, for a write still waiting for the lock (busy timeout: 10 s)
RETENTION_DAYS = 365
DAY_MS = 86_400_000
PRUNE_CHUNK = 1000
OVERFLOW_ALARM = "audit-overflow"
WRITE_ALARM = "audit-write"


class AuditTrail:
    def __init__(self, path: Path, worker: Worker, clock: Clock, alarms: Alarms):
        self._path = path
        self._worker = worker
        self._clock = clock
        self._alarms = alarms
        self._buffer: deque[Row] = deque()
        self._timer: Timer | None = None
        self._flush_queued = False
        self._prune_timer: Timer | None = None
        self._overflowing = False
        self._in_flight: tuple[AsyncResult, int] | None = None  # the batch being written, its size
        self.dropped = 0

    # ---- the request path: a tuple into the buffer -------------------------------------------------
    def note(self, route: "Route", request: "bottle.BaseRequest", params: dict[str, str], seen: "Seen", status: int) -> None:
        """A finished request on ``route``; ``seen`` is what it revealed (principal, body, call, result)."""
        call = seen.call
        checked = seen.principal is not None or route.access == "public"
        name = tried_name(route.path, seen.body, call.audit_actor if call is not None else None)
        environ = request.environ
        self._append(
            Row(
                self._clock.now_ms(), *who(seen.principal, name), route.method, route.path, action_of(route.method, route.path),
                target_of(params), outcome_of(status, route.path, seen.result, checked), status, client_address(request), agent_of(environ),
            )  # fmt: skip
        )

    def note_unmatched(self, request: "bottle.BaseRequest", status: int) -> None:
        """A mutating request under the API that matched no route (404, or 405 for a wrong method):
        probing is worth seeing. The path itself is not kept: free text from the caller."""
        environ = request.environ
        self._append(
            Row(self._clock.now_ms(), None, None, None, None, request.method, None, None, None,
                outcome_of(status, None, None, False), status, client_address(request), agent_of(environ))  # fmt: skip
        )

    def _append(self, row: Row) -> None:
        buffer = self._buffer
        if len(buffer) >= MAX_BUFFERED:
            self.dropped += 1
            if not self._overflowing:
                self._overflowing = True
                log.error("audit buffer full (%d entries): dropping new entries", MAX_BUFFERED)
                gevent.get_hub().loop.run_callback(self._raise_overflow)  # not on the request path
            return
        buffer.append(row)
        if len(buffer) >= BATCH_SIZE:
            self._queue_flush()
        elif self._timer is None and not self._flush_queued:
            self._timer = self._clock.call_later(FLUSH_DELAY_S, self._queue_flush)

    def _raise_overflow(self) -> None:
        message = f"The audit trail could not be written in time: {self.dropped} entries dropped so far"
        self._alarms.raise_alarm(OVERFLOW_ALARM, "error", "audit", message)

    # ---- the worker: batches -----------------------------------------------------------------------
    def _queue_flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._flush_queued:
            self._flush_queued = self._worker.submit(self._flush)

    def _flush(self) -> None:
        try:
            written = self.flush()
        finally:
            self._flush_queued = False  # set from the queueing to here: no second flush meanwhile
        if written and len(self._buffer) >= BATCH_SIZE:
            self._queue_flush()  # what came in while the batch was written
        elif self._buffer and self._timer is None:
            self._timer = self._clock.call_later(FLUSH_DELAY_S if written else RETRY_DELAY_S, self._queue_flush)

    def flush(self) -> bool:
        """Write what is buffered in one transaction; False (entries kept) when the write failed."""
        batch = list(self._buffer)
        if not batch:
            return True
        writing = started_in_thread(store.insert, self._path, batch)
        self._in_flight = (writing, len(batch))
        try:
            writing.get()
        except Exception as error:
            self._in_flight = None
            log.error("could not write %d audit entries: %s", len(batch), error)
            self._alarms.raise_alarm(WRITE_ALARM, "error", "audit", f"The audit trail cannot be written: {error}")
            return False
        self._written(len(batch))
        return True

    def _written(self, count: int) -> None:
        self._in_flight = None
        for _ in range(count):  # new entries may have been appended behind the batch meanwhile
            self._buffer.popleft()
        self._alarms.resolve(WRITE_ALARM, "The audit trail is written again")
        if self._overflowing:
            self._overflowing = False
            self._alarms.resolve(OVERFLOW_ALARM, f"The audit trail caught up ({self.dropped} entries dropped in all)")

    # ---- retention ---------------------------------------------------------------------------------
    def start(self) -> None:
        self._worker.submit(self._prune)

    def _prune(self) -> None:
        """Delete entries past retention, a chunk at a time; then again in a day."""
        cutoff = self._clock.now_ms() - RETENTION_DAYS * DAY_MS
        try:
            while in_thread(store.delete_older, self._path, cutoff, PRUNE_CHUNK) == PRUNE_CHUNK:
                gevent.sleep(0)
        except Exception as error:
            log.error("could not delete old audit entries: %s", error)
        self._prune_timer = self._clock.call_later(DAY_MS / 1000, lambda: self._worker.submit(self._prune))

    def stop(self) -> None:
        """Retention off; what is buffered goes to the worker, which writes it while the engine drains."""
        if self._prune_timer is not None:
            self._prune_timer.cancel()
            self._prune_timer = None
        self._queue_flush()

    def final_write(self) -> None:
        """At shutdown, after the workers stopped: what is still buffered goes to disk now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._in_flight is not None:  # the stopped worker's write, still in its thread: not twice
            writing, count = self._in_flight
            writing.wait(FINAL_WAIT_S)
            if writing.successful():
                self._written(count)
            self._in_flight = None
        if not self.flush():
            log.error("audit: %d entries could not be written at shutdown", len(self._buffer))
