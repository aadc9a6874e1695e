"""How the trail is written: off the request path, through a locked or failing database, and kept
365 days."""

from __future__ import annotations

import sqlite3
import threading
import time

import gevent
import pytest

from hausbox.audit import store, trail
from tests.audit.helpers import START, entries, written
from tests.inprocess import local_ms


def _count(house) -> int:
    with sqlite3.connect(house.data_dir / "hausbox.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM audit_entries").fetchone()[0]


def _wait(predicate, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        gevent.sleep(0.05)  # the engine's greenlets run meanwhile


def test_requests_answer_at_once_while_another_connection_holds_the_database(house):
    house.token()
    assert house.api("POST", "/zones", {})[0] == 400  # warm up: the app is built, the admin known
    _wait(lambda: _count(house) == 1)
    lock = sqlite3.connect(house.data_dir / "hausbox.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the write lock, for longer than a batch delay
    try:
        slowest, loop_began = 0.0, time.monotonic()
        for _ in range(20):
            began = time.monotonic()
            assert house.api("POST", "/zones", {})[0] == 400
            slowest = max(slowest, time.monotonic() - began)
            gevent.sleep(0.1)  # 2 s in all: the batch is due and its writer waits for the lock
        # ~1 ms each; a request that waited for the lock would wait until it is released after
        # this loop (SQLite's timeout is 10 s). The bound leaves room for a pause of the whole
        # suite's process on a loaded machine (0.33 s once in CI, 1 ms when run alone).
        assert slowest < 1.0
        assert time.monotonic() - loop_began < 5  # nor did the waiting writer stall the process
        assert house.engine.workers.get("audit").queued == 0 and _count(house) == 1  # taken, not yet stored
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    _wait(lambda: _count(house) == 21)


def test_a_failed_write_keeps_its_entries_and_a_full_buffer_drops_loudly(make_house, monkeypatch):
    home = make_house(start=START, services=["audit"])
    home.token()
    monkeypatch.setattr(trail, "MAX_BUFFERED", 5)

    def refuse(path, rows):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "insert", refuse)
    for _ in range(8):
        home.api("POST", "/zones", {})
    written(home)
    alarms = home.engine.alarms
    assert alarms.is_active(trail.WRITE_ALARM) and alarms.is_active(trail.OVERFLOW_ALARM)
    assert home.engine.audit.dropped == 3 and _count(home) == 0
    raised = [e["alarmId"] for e in home.events("system.alarm.raised")]
    assert raised.count(trail.OVERFLOW_ALARM) == 1 and trail.OVERFLOW_ALARM in [a["alarmId"] for a in alarms.active()]
    monkeypatch.undo()  # the database takes writes again: the retry stores what was kept
    home.advance(trail.RETRY_DELAY_S)
    assert len(entries(home)) == 5
    assert not alarms.is_active(trail.WRITE_ALARM) and not alarms.is_active(trail.OVERFLOW_ALARM)
    resolved = [e for e in home.events("system.alarm.resolved") if e["alarmId"] == trail.OVERFLOW_ALARM]
    assert "3 entries dropped" in resolved[0]["message"]


def test_a_full_batch_is_written_without_waiting_for_the_delay(make_house):
    home = make_house(start=START, services=["audit"])
    home.token()
    for _ in range(trail.BATCH_SIZE):
        home.api("POST", "/zones", {})
    home.settle()  # no time passed
    assert _count(home) == trail.BATCH_SIZE


def test_entries_are_kept_365_days(make_house):
    home = make_house(start=START, services=["audit"])
    home.token()
    home.api("POST", "/zones", {})
    written(home)
    home.advance(3600)
    home.api("POST", "/zones", {})  # an hour younger
    written(home)
    day = 86_400_000
    home.restart(at=local_ms(START) + 364 * day)
    home.settle()  # retention runs at start (the component's start stage: ``services``)
    assert _count(home) == 2
    home.restart(at=local_ms(START) + 365 * day + 1800_000)  # the first is past 365 days, the second not
    home.settle()
    assert _count(home) == 1
    home.advance(86_400)  # the daily run
    assert _count(home) == 0


def test_retention_deletes_in_chunks(make_house, monkeypatch):
    monkeypatch.setattr(trail, "PRUNE_CHUNK", 7)
    home = make_house(start=START, services=["audit"])
    home.token()
    for _ in range(30):
        home.api("POST", "/zones", {})
    written(home)
    chunks: list[int] = []
    delete = store.delete_older
    monkeypatch.setattr(store, "delete_older", lambda *args: chunks.append(delete(*args)) or chunks[-1])
    home.restart(at=local_ms(START) + 366 * 86_400_000)
    home.settle()
    assert chunks == [7, 7, 7, 7, 2] and _count(home) == 0


@pytest.mark.parametrize("days, kept", [(364, 1), (366, 0)])
def test_one_entry_at_364_and_366_days(make_house, days, kept):
    home = make_house(start=START, services=["audit"])
    home.token()
    home.api("POST", "/zones", {})
    written(home)
    home.restart(at=local_ms(START) + days * 86_400_000)
    home.settle()
    assert _count(home) == kept


def test_a_write_the_stopped_worker_left_in_its_thread_is_not_written_twice(make_house, monkeypatch):
    home = make_house(start=START, services=["audit"])
    home.token()
    release = threading.Event()
    insert = store.insert
    monkeypatch.setattr(store, "insert", lambda path, rows: release.wait(10) and insert(path, rows))
    monkeypatch.setattr(trail, "BATCH_SIZE", 1)
    home.api("POST", "/zones", {})  # a full batch: the worker writes it at once, and waits for its thread
    gevent.sleep(0.05)
    assert home.engine.workers.get("audit").drain(0.2) is False
    home.engine.workers.stop(0.1)  # the shutdown's drain ran out: the waiting worker is ended
    release.set()  # the thread commits after all
    home.engine.audit.final_write()
    assert _count(home) == 1
