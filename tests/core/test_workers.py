"""core/workers: in order, beside the emitter, bounded (overflow counted and alarmed), gated, drained."""

from __future__ import annotations

import errno
import sys

import gevent
import pytest

from hausbox.core.bus import EventBus
from hausbox.core.workers import Workers, in_thread, started_in_thread
from tests.disk import fill


@pytest.fixture
def workers():
    made = Workers(EventBus())
    made.start()
    yield made
    made.stop(1)


def test_events_run_in_order_in_the_worker_never_in_the_emitter(workers):
    worker = workers.create("w")
    seen = []
    worker.on("device.heartbeat", lambda event: seen.append((event["n"], gevent.getcurrent())))
    for n in range(5):
        workers.bus.emit("device.heartbeat", n=n)
    assert seen == []  # emit returned before any handler ran
    assert workers.drain(1)
    assert [n for n, _ in seen] == list(range(5))
    assert all(greenlet is not gevent.getcurrent() for _, greenlet in seen)


def test_a_waiting_handler_stalls_its_worker_only(workers):
    slow, fast = workers.create("slow"), workers.create("fast")
    done = []
    slow.on("device.heartbeat", lambda _e: gevent.sleep(30))
    fast.on("device.heartbeat", lambda e: done.append(e["n"]))
    workers.bus.emit("device.heartbeat", n=1)
    workers.bus.emit("device.heartbeat", n=2)
    assert fast.drain(1) and done == [1, 2]
    assert not slow.drain(0.05)


def test_accept_keeps_unwanted_events_out_of_the_queue(workers):
    worker = workers.create("w")
    seen = []
    worker.on("device.heartbeat", lambda e: seen.append(e["n"]), accept=lambda e: e["n"] % 2 == 0)
    for n in range(6):
        workers.bus.emit("device.heartbeat", n=n)
    assert worker.high_water <= 3
    assert workers.drain(1) and seen == [0, 2, 4]


def test_a_full_queue_drops_counts_and_alarms_once_then_resolves(workers):
    worker = workers.create("tiny", capacity=3)
    calls = []
    worker.on("device.heartbeat", lambda _e: gevent.sleep(0.05))
    workers.overflow_listeners.append(lambda w, overflowing: calls.append((w.name, overflowing)))
    for n in range(10):
        workers.bus.emit("device.heartbeat", n=n)  # never blocks the emitter
    assert worker.dropped >= 6
    gevent.sleep(0)  # the alarm is raised outside the emitter
    assert calls == [("tiny", True)]
    assert workers.drain(2)
    assert calls == [("tiny", True), ("tiny", False)]
    assert worker.stats()["dropped"] == worker.dropped and worker.handled <= 4


def test_outbound_jobs_are_held_while_the_gate_is_closed_housekeeping_runs(workers):
    worker = workers.create("w")
    acted, kept = [], []
    worker.on("device.heartbeat", lambda e: acted.append(e["n"]), outbound=True)
    worker.on("device.heartbeat", lambda e: kept.append(e["n"]))
    workers.gate.close("shadow mode")
    assert worker.held_off
    workers.bus.emit("device.heartbeat", n=1)
    assert workers.drain(1)
    workers.gate.open("shadow mode")
    workers.bus.emit("device.heartbeat", n=2)
    assert workers.drain(1)
    assert acted == [2] and kept == [1, 2] and worker.held == 1


def test_a_raising_job_is_logged_and_the_next_still_runs(workers, caplog):
    worker = workers.create("w")
    seen = []
    worker.submit(lambda: 1 / 0)
    worker.submit(seen.append, "after")
    assert workers.drain(1) and seen == ["after"]
    assert any("worker w" in r.getMessage() for r in caplog.records)


def test_stop_runs_what_was_queued_then_ends(workers):
    worker = workers.create("w")
    seen = []
    for n in range(3):
        worker.submit(seen.append, n)
    assert workers.stop(1) is True
    assert seen == [0, 1, 2]
    worker.submit(seen.append, 3)
    gevent.sleep(0.01)
    assert seen == [0, 1, 2]  # stopped: nothing more runs


def test_a_long_queue_yields_the_core(workers):
    worker = workers.create("busy")
    ticks = []
    ticker = gevent.spawn(lambda: [ticks.append(1) or gevent.sleep(0) for _ in range(1000)])
    for _ in range(200):
        worker.submit(lambda: sum(range(20_000)))  # ~0.5 ms of pure CPU each
    assert workers.drain(5)
    ticker.kill()
    assert len(ticks) > 5, "the worker held the loop for its whole queue"


def test_an_order_waiting_for_its_acknowledgement_stalls_only_the_worker_that_sent_it(house):
    # The in-process fake waits like a broker client waiting for its PUBACK.
    engine, fake = house.engine, house.fake
    lamp = house.light("lamp")
    fake.ack_delay_s, fake.echo = 1.0, False
    seen = []
    engine.bus.on("equipment.data.changed", lambda e: seen.append(e["value"]))
    engine.workers.create("orders").submit(engine.orders.execute, lamp, "state", "ON")
    gevent.sleep(0.05)  # the order is under way, waiting
    engine.devices.update_data("fake", "lamp", {"brightness": 42})  # the message path does not wait
    assert seen == [42] and fake.sent == [("lamp", "state", "ON")]
    assert not engine.workers.get("orders").drain(0.1)
    assert engine.workers.get("orders").drain(2)


def test_an_error_in_the_thread_pool_reaches_its_caller_even_when_stderr_is_on_a_full_disk(small_disk, monkeypatch):
    # gevent prints a pool thread's raised error before waking its waiter: on a full disk the print
    # failed and the waiter slept forever (a history flush refused by a full disk hung the stop).
    stderr = open(small_disk / "service.log", "w", buffering=1)
    filler = fill(small_disk)
    monkeypatch.setattr(sys, "stderr", stderr)

    def refused() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    try:
        with gevent.Timeout(5):
            with pytest.raises(OSError, match="No space left"):
                in_thread(refused)
            with pytest.raises(OSError, match="No space left"):
                started_in_thread(refused).get()
            assert in_thread(sum, [1, 2]) == 3 and started_in_thread(sum, [3, 4]).get() == 7
    finally:
        monkeypatch.undo()
        filler.unlink()
        stderr.close()
    assert (small_disk / "service.log").read_text() == ""  # a handled error is not printed as if unhandled
