"""Workers: the bus subscribers that work beside the message path.

The bus has two kinds of subscribers. Views (devices -> equipments -> zones, the WebSocket hub's
parking) run inline in ``emit``: they are in memory and never wait. Everything that talks to the
outside or may wait (orders, the database, HTTP) is a worker: it owns a bounded queue and one
greenlet, takes its events in order, and never blocks whoever emitted them. An order waiting for
its broker's acknowledgement therefore stalls one worker, never the MQTT loop that delivered the
message.

A full queue drops the new job, counts it, and raises a system alarm (once, resolved when the
queue has drained): never silent, never a stalled producer. Jobs that act on the home by
themselves (a recipe's handlers and timers, a button press, a calendar slot) are submitted as
outbound: they pass the one outbound gate, closed in shadow mode or on an inert instance, and are
counted as held and skipped while it is closed. A worker's housekeeping jobs always run.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Callable

import gevent
from gevent.event import AsyncResult
from gevent.event import Event as Flag

from hausbox.core.bus import Event, EventBus
from hausbox.core.errors import ServiceUnavailable

log = logging.getLogger("hausbox.workers")

DEFAULT_CAPACITY = 10_000
SLICE_S = 0.005  # a worker with a long queue yields the core this often


def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run blocking work (a file, SQLite, bcrypt) in gevent's native thread pool: the calling
    greenlet waits, every other greenlet runs on. Its error is raised here."""
    return _settled(gevent.get_hub().threadpool.apply(_outcome, (fn, args)))


def started_in_thread(fn: Callable[..., Any], *args: Any) -> AsyncResult:
    """Start blocking work in the thread pool; its result (or error) to wait on, settled when the
    thread ends even if the greenlet that started it is killed meanwhile."""
    result = AsyncResult()

    def settle(done: AsyncResult) -> None:  # in the hub, once the thread is done
        try:
            result.set(_settled(done.value))
        except BaseException as error:
            result.set_exception(error)

    gevent.get_hub().threadpool.spawn(_outcome, fn, args).rawlink(settle)
    return result


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """In the pool thread: the result or the error, returned, never raised. gevent hands a raised
    error to its waiter only after printing it through the hub: a handled error then looks unhandled
    in the log, and with stderr on a full disk the print fails and the waiter is never woken."""
    try:
        return True, fn(*args)
    except BaseException as error:
        return False, error


def _settled(outcome: tuple[bool, Any]) -> Any:
    ok, value = outcome
    if not ok:
        raise value
    return value


class OutboundGate:
    """Whether automation may act on the home. One gate for every outbound worker."""

    def __init__(self) -> None:
        self._reasons: set[str] = set()

    def close(self, reason: str) -> None:
        self._reasons.add(reason)

    def open(self, reason: str) -> None:
        self._reasons.discard(reason)

    @property
    def is_open(self) -> bool:
        return not self._reasons

    @property
    def reasons(self) -> list[str]:
        return sorted(self._reasons)

    @property
    def held_detail(self) -> str:
        """Why a subsystem shows as held, for its status (empty while the gate is open)."""
        return f"held: outbound subsystems are off ({'; '.join(self.reasons)})" if self._reasons else ""


class Worker:
    """One bounded queue of jobs run in order by one greenlet (see the module docstring)."""

    def __init__(self, name: str, bus: EventBus, capacity: int, gate: OutboundGate, on_overflow: Callable[["Worker", bool], None]):
        self.name = name
        self.capacity = capacity
        self.handled = 0
        self.dropped = 0
        self.held = 0
        self.high_water = 0
        self._bus = bus
        self._gate = gate
        self._on_overflow = on_overflow
        self._overflowing = False
        self._jobs: deque[tuple[Callable[..., Any], tuple[Any, ...], bool]] = deque()
        self._wake = Flag()
        self._idle = Flag()
        self._idle.set()
        self._greenlet: gevent.Greenlet | None = None

    @property
    def held_off(self) -> bool:
        """Whether outbound jobs are held (shadow mode, an inert instance)."""
        return not self._gate.is_open

    @property
    def queued(self) -> int:
        return len(self._jobs)

    # ---- what the worker does ------------------------------------------------------------------
    def on(
        self, event_type: str, handler: Callable[[Event], None], accept: Callable[[Event], bool] | None = None, outbound: bool = False
    ) -> Callable[[], None]:
        """Run ``handler`` in this worker for every ``event_type`` event; returns the unsubscriber.

        ``accept`` (pure, in memory) runs inline and keeps the events the worker has no use for
        out of its queue: a button worker needs only presses, not every value of the house.
        ``outbound``: the handler acts on the home by itself (see the module docstring).
        """
        submit = self.submit_outbound if outbound else self.submit
        if accept is None:
            return self._bus.on(event_type, lambda event: submit(handler, event))
        return self._bus.on(event_type, lambda event: accept(event) and submit(handler, event))

    def on_any(self, handler: Callable[[Event], None]) -> Callable[[], None]:
        """Run ``handler`` in this worker for every event, in emission order."""
        return self._bus.on_any(lambda event: self.submit(handler, event))

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``; never waits. False when the queue was full (counted and alarmed)."""
        return self._queue(fn, args, False)

    def submit_outbound(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``, a job that acts on the home: held while the outbound gate is closed."""
        return self._queue(fn, args, True)

    def run_and_wait(self, fn: Callable[[], Any], timeout_s: float = 120.0) -> Any:
        """Run ``fn`` as this worker's next job and wait for its result; its exception is raised here.
        For a caller that needs, now, what only this worker may do (a checkpoint before a backup);
        a full queue or no answer in time is a 503."""
        done = AsyncResult()

        def job() -> None:
            try:
                done.set(fn())
            except BaseException as error:  # handed to the waiting caller
                done.set_exception(error)

        if not self.submit(job):
            raise ServiceUnavailable(f"The {self.name} worker is busy: try again")
        try:
            return done.get(timeout=timeout_s)
        except gevent.Timeout:
            raise ServiceUnavailable(f"The {self.name} worker did not answer in time: try again") from None

    def _queue(self, fn: Callable[..., Any], args: tuple[Any, ...], outbound: bool) -> bool:
        jobs = self._jobs
        if len(jobs) >= self.capacity:
            self.dropped += 1
            if not self._overflowing:
                self._overflowing = True
                log.error("worker %s: queue full (%d jobs): dropping", self.name, self.capacity)
                gevent.get_hub().loop.run_callback(self._on_overflow, self, True)  # not inside the emitter
            return False
        jobs.append((fn, args, outbound))
        if len(jobs) > self.high_water:
            self.high_water = len(jobs)
        self._idle.clear()
        self._wake.set()
        return True

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        if self._greenlet is None or self._greenlet.dead:
            self._greenlet = gevent.spawn(self._run)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued job has run; False on timeout (or when not started)."""
        if self._greenlet is None and self._jobs:
            return False
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 5.0) -> bool:
        """Run what is queued (up to ``timeout``), then end the greenlet; True when nothing was lost."""
        drained = self.drain(timeout) if self._greenlet is not None else not self._jobs
        greenlet, self._greenlet = self._greenlet, None
        if greenlet is not None and greenlet is not gevent.getcurrent():
            greenlet.kill(block=True, timeout=1.0)
        if not drained:
            log.warning("worker %s stopped with %d job(s) not run", self.name, len(self._jobs))
        return drained

    def _run(self) -> None:
        jobs = self._jobs
        while True:
            self._wake.wait()
            self._wake.clear()
            slice_end = time.perf_counter() + SLICE_S
            while jobs:
                fn, args, outbound = jobs.popleft()
                if outbound and not self._gate.is_open:
                    self.held += 1
                else:
                    self._call(fn, args)
                if time.perf_counter() > slice_end:
                    gevent.sleep(0)  # a long queue shares the core with the message path and requests
                    slice_end = time.perf_counter() + SLICE_S
            self._idle.set()
            if self._overflowing:
                self._overflowing = False
                self._on_overflow(self, False)

    def _call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("worker %s: %s failed", self.name, getattr(fn, "__qualname__", fn))
        self.handled += 1

    def stats(self) -> dict[str, Any]:
        return {"queued": len(self._jobs), "handled": self.handled, "dropped": self.dropped, "held": self.held, "highWater": self.high_water}


class Workers:
    """Every worker of the engine: made here, started, drained and stopped together."""

    def __init__(self, bus: EventBus, gate: OutboundGate | None = None):
        self.bus = bus
        self.gate = gate or OutboundGate()
        self._workers: dict[str, Worker] = {}
        self._started = False
        # Told (worker, True) when a worker's queue overflows and (worker, False) once it drained.
        self.overflow_listeners: list[Callable[[Worker, bool], None]] = []

    def create(self, name: str, capacity: int = DEFAULT_CAPACITY) -> Worker:
        if name in self._workers:
            raise ValueError(f"worker declared twice: {name}")
        worker = Worker(name, self.bus, capacity, self.gate, self._overflowed)
        self._workers[name] = worker
        if self._started:
            worker.start()
        return worker

    def get(self, name: str) -> Worker | None:
        return self._workers.get(name)

    def all(self) -> list[Worker]:
        return list(self._workers.values())

    def start(self) -> None:
        self._started = True
        for worker in self._workers.values():
            worker.start()

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every worker is idle, including work one worker queued for another."""
        deadline = time.monotonic() + timeout
        while True:
            busy = [w for w in self._workers.values() if w.queued or not w._idle.is_set()]
            if not busy:
                return True
            for worker in busy:
                if not worker.drain(max(0.0, deadline - time.monotonic())):
                    return False

    def stop(self, timeout: float = 5.0) -> bool:
        """Drain, then end every worker; True when no queued job was lost."""
        drained = self.drain(timeout)
        self._started = False
        for worker in self._workers.values():
            drained = worker.stop(0.1) and drained
        return drained

    def stats(self) -> dict[str, dict[str, Any]]:
        return {name: worker.stats() for name, worker in self._workers.items()}

    def _overflowed(self, worker: Worker, overflowing: bool) -> None:
        for listener in self.overflow_listeners:
            try:
                listener(worker, overflowing)
            except Exception:
                log.exception("overflow listener failed")
