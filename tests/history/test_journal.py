"""The journal between commits and flushes: what a crash at any point leaves, and nothing twice."""

from __future__ import annotations

import os

from hausbox.history.journal import Journal
from hausbox.history.batch import Batch
from hausbox.history.store import JOURNAL_NAME, HistoryStore

KEY = ("eq", "energy")


def batch(ts: int, value: float, wh: float = 0.0) -> Batch:
    out = Batch(points=[(*KEY, ts, value)])
    if wh:
        out.add_energy(KEY, 0, 0, wh, 0.0)
        out.meters[KEY] = (value, ts, "d1")
    return out


def test_journaled_points_are_read_at_once_and_found_again_after_a_crash(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    store.write(batch(1000, 1.0, wh=10))
    store.write(batch(2000, 2.0, wh=5))
    assert store.raw(*KEY) == [(1000, 1.0), (2000, 2.0)]  # readable before any flush
    assert store.energy("energy_hourly", *KEY, 0, 1) == [(0, 15.0, 0.0)]
    assert store.count() == 0  # nothing in SQLite yet
    # kill -9: the store is never closed nor flushed; a new one on the same files replays the journal
    again = HistoryStore(tmp_path / "history.db")
    assert again.raw(*KEY) == [(1000, 1.0), (2000, 2.0)] and again.count() == 2
    assert again.energy("energy_hourly", *KEY, 0, 1) == [(0, 15.0, 0.0)]
    assert again.meter_baselines() == {KEY: (2.0, 2000, "d1")}
    assert os.path.getsize(tmp_path / JOURNAL_NAME) == 0  # moved into SQLite, the journal starts again


def test_a_torn_last_frame_is_dropped_and_the_journal_goes_on_after_the_last_whole_one(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    store.write(batch(1000, 1.0))
    store.write(batch(2000, 2.0))
    path = tmp_path / JOURNAL_NAME
    os.truncate(path, os.path.getsize(path) - 3)  # the process died in the middle of the second write
    again = HistoryStore(tmp_path / "history.db")
    assert again.raw(*KEY) == [(1000, 1.0)]
    again.write(batch(3000, 3.0))
    third = HistoryStore(tmp_path / "history.db")
    assert third.raw(*KEY) == [(1000, 1.0), (3000, 3.0)]


def test_a_crash_between_the_flush_and_the_journal_reset_counts_nothing_twice(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    store.write(batch(1000, 1.0, wh=10))
    kept = (tmp_path / JOURNAL_NAME).read_bytes()
    store.flush()  # in SQLite, and the journal emptied ...
    (tmp_path / JOURNAL_NAME).write_bytes(kept)  # ... which the crash did not get to do
    again = HistoryStore(tmp_path / "history.db")
    assert again.energy("energy_hourly", *KEY, 0, 1) == [(0, 10.0, 0.0)]
    again.write(batch(2000, 2.0, wh=1))  # sequences go on past the flushed one: this one is replayed
    third = HistoryStore(tmp_path / "history.db")
    assert third.energy("energy_hourly", *KEY, 0, 1) == [(0, 11.0, 0.0)]


def test_a_frame_is_one_write_of_a_few_bytes_per_point(tmp_path):
    journal = Journal(tmp_path / "j.log")
    points = Batch(points=[(f"equipment-{n % 40:02d}", "temperature", 1_780_000_000_000 + n * 125, 20 + (n % 50) / 10) for n in range(400)])
    journal.append(points.document(None))
    assert os.path.getsize(tmp_path / "j.log") / 400 < 12  # a 5 s commit at 80 points/s: well under a page


def test_a_journal_written_before_baselines_kept_their_device_is_replayed(tmp_path):
    journal = Journal(tmp_path / JOURNAL_NAME)
    journal.append({"b": 1000, "p": [[0, 0, 7.5]], "t": [], "eh": [[0, 0, 10.0, 0.0]], "ed": [[0, 0, 10.0, 0.0]], "m": [[0, 7.5, 1000]], "l": {}, "k": [list(KEY)]})
    journal.close()
    store = HistoryStore(tmp_path / "history.db")
    assert store.meter_baselines() == {KEY: (7.5, 1000, None)} and store.raw(*KEY) == [(1000, 7.5)]
    store.close()
