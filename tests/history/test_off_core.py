"""The store never holds the core: a flush that the disk holds up (here SQLite waiting for another
connection's read to end, as it waits on a slow card's fsync) or a read that takes long (here
waiting for another connection's write) lets every other greenlet run meanwhile, and a read made
during a flush waits for it and counts the batch once."""

from __future__ import annotations

import sqlite3
import time

import gevent

from hausbox.core.workers import in_thread
from hausbox.history.batch import Batch
from hausbox.history.store import HistoryStore

HOUR = 3_600_000
T0 = 1_781_424_000_000  # an hour start
METER = ("compteur", "energy")
HELD_S = 0.5


def test_a_held_up_flush_leaves_the_core_to_the_others_and_a_read_meanwhile_counts_once(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    batch = Batch(points=[("salon", "temperature", T0 + i * 60_000, 20.0 + i / 100) for i in range(60)])
    batch.add_energy(METER, T0, T0, 300.0, 0.0)
    store.write(batch)

    reader = sqlite3.connect(tmp_path / "history.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM points").fetchone()  # a shared lock: the flush's commit must wait for it

    ticks: list[float] = []

    def tick() -> None:
        while True:
            ticks.append(time.monotonic())
            gevent.sleep(0.01)

    def release() -> None:
        gevent.sleep(HELD_S)
        reader.execute("COMMIT")  # the other connection's read ends: the flush may commit

    ticker, releaser = gevent.spawn(tick), gevent.spawn(release)
    flushing = gevent.spawn(store.flush)
    gevent.sleep(0.05)
    assert not flushing.ready()  # held up by the read
    during = store.energy("energy_hourly", *METER, T0, T0 + HOUR)  # waits for the flush, in this greenlet only
    points = store.raw("salon", "temperature", T0, T0 + HOUR)
    assert flushing.get(timeout=5) == 60
    ticker.kill()
    releaser.join()

    assert during == [(T0, 300.0, 0.0)]  # the batch once: in SQLite, no longer in memory
    assert len(points) == 60 and store.pending == 0
    assert len(ticks) >= HELD_S / 0.01 * 0.6, f"the core was held: {len(ticks)} ticks in {HELD_S} s"
    store.close()
    assert HistoryStore(tmp_path / "history.db").energy("energy_hourly", *METER, T0, T0 + HOUR) == [(T0, 300.0, 0.0)]


def test_a_flush_whose_waiting_greenlet_is_killed_still_ends_before_the_next_use(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    batch = Batch()
    batch.add_energy(METER, T0, T0, 120.0, 30.0)
    store.write(batch)
    reader = sqlite3.connect(tmp_path / "history.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM energy_hourly").fetchone()

    flushing = gevent.spawn(store.flush)
    gevent.sleep(0.05)
    flushing.kill()  # as a worker stopped at shutdown: the thread's transaction goes on
    gevent.spawn_later(0.2, reader.execute, "COMMIT")
    assert store.flush() == 0  # waits for that flush, then finds nothing left to move
    assert store.energy("energy_hourly", *METER, T0, T0 + HOUR) == [(T0, 120.0, 30.0)]
    store.close()


def test_a_held_up_read_leaves_the_core_to_the_others(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    store.write(Batch(points=[("salon", "temperature", T0 + i * 60_000, 20.0) for i in range(60)]))
    store.flush()
    writer = sqlite3.connect(tmp_path / "history.db", isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # no reader may start until it ends, as a scan of a long day takes long
    ticks: list[float] = []

    def tick() -> None:
        while True:
            ticks.append(time.monotonic())
            gevent.sleep(0.01)

    ticker = gevent.spawn(tick)
    gevent.spawn_later(HELD_S, writer.execute, "COMMIT")
    started = time.monotonic()
    points = store.raw("salon", "temperature", T0, T0 + HOUR)
    ticker.kill()
    assert len(points) == 60
    during = [t for t in ticks if t > started]
    assert len(during) >= HELD_S / 0.01 * 0.6, f"the core was held: {len(during)} ticks in {HELD_S} s"
    store.close()


def test_a_store_made_in_a_pool_thread_works_there(tmp_path):
    # A restore builds the history from CSV in a pool thread: the store hops from there too.
    def in_a_thread() -> list:
        store = HistoryStore(tmp_path / "history.db")
        store.write(Batch(points=[("salon", "temperature", T0, 20.5)]))
        store.flush()
        points = store.raw("salon", "temperature", T0, T0 + HOUR)
        store.close()
        return points

    assert in_thread(in_a_thread) == [(T0, 20.5)]
