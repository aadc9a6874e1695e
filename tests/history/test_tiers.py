"""The store's tiers over a year of minute data: downsampling, retention, catch-up and the queries.

The store and its jobs run here without an engine: a ManualClock moves a day at a time, a day of
minute points is written as the writer would (one batch), and the jobs run as their timer would.
Values are chosen so every aggregate has a closed form: on day ``d`` at minute ``m`` of the hour,
series ``a`` reads ``d + m / 60`` (an hour's min d, max d + 59/60, mean d + 29.5/60, sum 60 d + 29.5).
"""

from __future__ import annotations

from datetime import date, timedelta

import sqlite3
from pathlib import Path

import pytest

from hausbox.core.clock import ManualClock, iso_utc
from hausbox.history import buckets, query
from hausbox.history.jobs import DAILY, HOURLY, TierJobs
from hausbox.history.batch import Batch
from hausbox.history.store import DAY_MS, HistoryStore
from tests.inprocess import PARIS, local_ms

FIRST_DAY = date(2025, 11, 1)
DAYS = 366  # 2025-11-01 .. 2026-11-01: both DST changes of 2026 inside
A, B = ("eq", "a"), ("eq", "b")


class Jobs(TierJobs):
    """The jobs with their worker left out: the test calls ``run`` where the timer would."""

    def __init__(self, store: HistoryStore, clock: ManualClock):
        super().__init__(store, worker=None, clock=clock)


def day_of_points(day_index: int, day: date) -> Batch:
    batch = Batch()
    start, end = buckets.midnight(day, PARIS), buckets.midnight(day + timedelta(days=1), PARIS)
    for ts in range(start, end, 60_000):
        minute = (ts // 60_000) % 60
        batch.points.append((*A, ts, day_index + minute / 60))
        if minute % 15 == 0:
            batch.points.append((*B, ts, 100.0))
    return batch


@pytest.fixture(scope="module")
def year(tmp_path_factory):
    """A year written a day at a time, the jobs run every simulated day after midnight."""
    store = HistoryStore(tmp_path_factory.mktemp("tiers") / "history.db")
    clock = ManualClock(PARIS, buckets.midnight(FIRST_DAY, PARIS))
    jobs = Jobs(store, clock)
    for index in range(DAYS):
        day = FIRST_DAY + timedelta(days=index)
        store.write(day_of_points(index, day))
        clock.set(buckets.midnight(day + timedelta(days=1), PARIS) + 10 * 60_000)  # 00:10 the day after
        jobs.run()
    yield store, clock, jobs
    store.close()


def test_the_raw_tier_keeps_seven_days_and_no_more(year):
    store, clock, _ = year
    now = clock.now_ms()
    oldest = store.raw(*A)[0][0]
    assert now - 7 * DAY_MS <= oldest < now - 7 * DAY_MS + 3_600_000
    assert store.raw(*A, 0, now - 7 * DAY_MS) == []


def test_every_local_hour_of_the_year_is_in_the_hourly_tier_with_its_closed_form(year):
    store, clock, _ = year
    start, end = buckets.midnight(FIRST_DAY, PARIS), buckets.midnight(FIRST_DAY + timedelta(days=DAYS), PARIS)
    rows = store.aggregates("hourly", *A, start, end)
    assert len(rows) == len(buckets.hours_between(start, end, PARIS)) == DAYS * 24  # a 23 h and a 25 h day
    for ts, low, high, mean, total, count in rows:
        day_index = (buckets.local(ts, PARIS).date() - FIRST_DAY).days
        assert count == 60
        assert (low, high) == (day_index, pytest.approx(day_index + 59 / 60))
        assert mean == pytest.approx(day_index + 29.5 / 60)
        assert total == pytest.approx(60 * day_index + 29.5)


def test_the_daily_tier_has_every_local_day_weighted_by_its_points(year):
    store, _, _ = year
    start, end = buckets.midnight(FIRST_DAY, PARIS), buckets.midnight(FIRST_DAY + timedelta(days=DAYS), PARIS)
    rows = store.aggregates("daily", *A, start, end)
    assert [ts for ts, *_ in rows] == buckets.days_between(FIRST_DAY, FIRST_DAY + timedelta(days=DAYS), PARIS)
    for index, (_ts, low, high, mean, _total, count) in enumerate(rows):
        day = FIRST_DAY + timedelta(days=index)
        hours = len(buckets.hours_between(buckets.midnight(day, PARIS), buckets.midnight(day + timedelta(days=1), PARIS), PARIS))
        assert count == hours * 60  # 1380 on 29 March, 1500 on 25 October
        assert (low, high, mean) == (index, pytest.approx(index + 59 / 60), pytest.approx(index + 29.5 / 60))
    b = store.aggregates("daily", *B, start, end)
    assert {row[3] for row in b} == {100.0} and b[0][5] == 96


def test_queries_pick_the_tier_from_the_span(year):
    store, clock, _ = year
    now = clock.now_ms()
    assert query.resolution_for("auto", 6 * 3_600_000, "temperature", "a", False) == "raw"
    assert query.resolution_for("auto", 7 * DAY_MS, "temperature", "a", False) == "1h"
    assert query.resolution_for("auto", 30 * DAY_MS, "temperature", "a", False) == "1d"
    assert query.resolution_for("auto", 2 * DAY_MS, "power", "power", False) == "1h"
    assert query.resolution_for("1d", 3_600_000, "generic", "state", True) == "raw"
    raw = query.series(store, PARIS, A, now - 3_600_000, now, "raw", "number", "temperature")
    assert len(raw) == 50  # 23:10 to 00:10: the last day's points end at midnight
    assert raw[-1] == {"time": iso_utc(buckets.day_start(now, PARIS) - 60_000), "value": pytest.approx(DAYS - 1 + 59 / 60)}
    year_of_days = query.series(store, PARIS, A, now - 365 * DAY_MS, now, "1d", "number", "temperature")
    assert len(year_of_days) == 364  # the days that start inside the span: 3 Nov 2025 .. 1 Nov 2026
    assert year_of_days[-1]["min"] == DAYS - 1 and year_of_days[-1]["value"] == pytest.approx(DAYS - 1 + 29.5 / 60)
    week_of_hours = query.series(store, PARIS, A, now - 7 * DAY_MS, now, "1h", "number", "temperature")  # from 01:00: 167 hours
    assert len(week_of_hours) == 7 * 24 - 1 and all("min" in p and "max" in p for p in week_of_hours)
    summed = query.series(store, PARIS, A, now - DAY_MS, now, "1h", "number", "rain")
    assert summed[-1]["value"] == pytest.approx(60 * (DAYS - 1) + 29.5)


def test_the_jobs_record_their_runs_and_the_status_says_so(year):
    store, clock, jobs = year
    status = jobs.status()
    assert status["buckets"]["raw"]["retentionSeconds"] == 7 * 86400
    assert status["buckets"]["daily"]["retentionSeconds"] == 10 * 365 * 86400
    assert status["tasks"]["hourly"]["status"] == "ok" and status["tasks"]["hourly"]["lastRunAt"] == iso_utc(clock.now_ms())
    assert status["tasks"]["daily"]["doneUntil"] == iso_utc(buckets.day_start(clock.now_ms(), PARIS))
    assert status["tasks"]["retention-raw"]["status"] == "ok"


def test_hours_not_yet_made_are_computed_from_raw_points_at_request_time(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    t0 = local_ms("2026-06-15 08:00")
    clock = ManualClock(PARIS, t0)
    jobs = Jobs(store, clock)
    batch = Batch(points=[(*A, t0 + n * 60_000, float(n)) for n in range(180)])  # 08:00 to 10:59
    store.write(batch)
    clock.set(t0 + 3 * 3_600_000 + 10 * 60_000)
    assert query.hourly(store, PARIS, A, t0, clock.now_ms()) == [
        (t0 + h * 3_600_000, 60.0 * h, 60.0 * h + 59, 60 * h + 29.5, sum(range(60 * h, 60 * h + 60)), 60) for h in range(3)
    ]  # nothing made yet: all three from raw points
    jobs.run()
    assert store.watermark(HOURLY) == t0 + 3 * 3_600_000
    assert query.hourly(store, PARIS, A, t0, clock.now_ms()) == store.aggregates("hourly", *A, t0, t0 + 3 * 3_600_000)
    store.close()


def test_a_late_point_makes_its_hour_again(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    t0 = local_ms("2026-06-15 08:00")
    clock = ManualClock(PARIS, t0 + 2 * 3_600_000 + 10 * 60_000)
    jobs = Jobs(store, clock)
    store.write(Batch(points=[(*A, t0 + 60_000, 10.0)]))
    jobs.run()
    assert store.aggregates("hourly", *A, t0, t0 + 3_600_000) == [(t0, 10.0, 10.0, 10.0, 10.0, 1)]
    store.write(Batch(points=[(*A, t0 + 120_000, 20.0)]), late_from={HOURLY: t0})  # what the writer passes
    assert store.watermark(HOURLY) == t0
    jobs.run()
    assert store.aggregates("hourly", *A, t0, t0 + 3_600_000) == [(t0, 10.0, 20.0, 15.0, 30.0, 2)]
    store.close()


def test_a_catch_up_after_downtime_makes_every_missed_hour_and_a_crash_redoes_one_chunk(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    t0 = local_ms("2026-06-10 00:00")
    clock = ManualClock(PARIS, t0)
    jobs = Jobs(store, clock)
    jobs.run()  # the first run sets the watermarks
    store.write(Batch(points=[(*A, t0 + n * 600_000, 1.0) for n in range(6 * 24 * 3)]))  # three days, every 10 min
    clock.set(t0 + 3 * DAY_MS + 600_000)
    made = []
    real = store.downsample_hours

    def crash_on_third_chunk(start, end, sub_hour, now_ms):
        made.append(start)
        if len(made) == 3:
            raise OSError("power cut")
        return real(start, end, sub_hour, now_ms)

    store.downsample_hours = crash_on_third_chunk
    jobs.run()
    assert store.watermark(HOURLY) == t0 + 11 * 3_600_000  # from 23:00 (the first run), two chunks of six hours, not the third
    assert jobs.status()["tasks"]["hourly"]["status"] == "error"
    store.downsample_hours = real
    jobs.run()
    assert len(store.aggregates("hourly", *A, t0, t0 + 3 * DAY_MS)) == 72
    assert store.watermark(DAILY) == t0 + 3 * DAY_MS
    assert [row[5] for row in store.aggregates("daily", *A, t0, t0 + 3 * DAY_MS)] == [144, 144, 144]
    store.close()


def test_retention_deletes_each_tier_past_its_own_age(tmp_path):
    store = HistoryStore(tmp_path / "history.db")
    now = local_ms("2026-06-15 08:10")
    clock = ManualClock(PARIS, now)
    store.write(Batch(points=[(*A, now - 60_000, 1.0)]))
    store.flush()
    series = store.series_of(*A)
    ages = {"hourly": (700, 740), "daily": (3600, 3700), "energy_hourly": (700, 740), "energy_daily": (3600, 3700)}  # days: kept, gone
    with sqlite3.connect(tmp_path / "history.db") as db:
        for table, (kept, gone) in ages.items():
            for age in (kept, gone):
                columns = "(series, ts, min, max, mean, sum, count) VALUES (?, ?, 1, 1, 1, 1, 1)" if table in ("hourly", "daily") else "(series, ts, hp, hc) VALUES (?, ?, 1, 0)"
                db.execute(f"INSERT INTO {table} {columns}", (series, now - age * DAY_MS))
    Jobs(store, clock).run()
    with sqlite3.connect(tmp_path / "history.db") as db:
        for table, (kept, _gone) in ages.items():
            assert db.execute(f"SELECT ts FROM {table} WHERE ts < ?", (now - 7 * DAY_MS,)).fetchall() == [(now - kept * DAY_MS,)], table
    store.close()


def an_older_store(path: Path, alias: str, script: str) -> HistoryStore:
    """A store opened on a file of an earlier layout: one series (1: ``eq``, ``alias``) and ``script``."""
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE series (id INTEGER PRIMARY KEY, equipment_id TEXT NOT NULL, alias TEXT NOT NULL, UNIQUE (equipment_id, alias));"
            f"INSERT INTO series VALUES (1, 'eq', '{alias}');" + script
        )
    return HistoryStore(path)


def test_a_store_of_the_first_layout_is_upgraded_with_its_points(tmp_path):
    store = an_older_store(tmp_path / "history.db", "a", (
        "CREATE TABLE points (series INTEGER NOT NULL, ts INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (series, ts)) WITHOUT ROWID;"
        "INSERT INTO points VALUES (1, 1000, 20.5), (1, 2000, 21.0);"
    ))
    assert store.raw(*A) == [(1000, 20.5), (2000, 21.0)]
    store.write(Batch(points=[(*A, 3000, 22.0)]))
    assert store.raw(*A, 2000) == [(2000, 21.0), (3000, 22.0)]
    store.close()


def test_meters_of_the_third_layout_keep_their_baselines_and_take_a_device(tmp_path):
    store = an_older_store(tmp_path / "history.db", "energy", (
        "CREATE TABLE meters (series INTEGER PRIMARY KEY, reading REAL NOT NULL, ts INTEGER NOT NULL);"
        "INSERT INTO meters VALUES (1, 40.5, 1000);"
    ))
    assert store.meter_baselines() == {("eq", "energy"): (40.5, 1000, None)}
    store.write(Batch(meters={("eq", "energy"): (41.0, 2000, "datum")}))
    store.flush()
    store.close()
    store = HistoryStore(tmp_path / "history.db")
    assert store.meter_baselines() == {("eq", "energy"): (41.0, 2000, "datum")}
    store.close()


@pytest.mark.parametrize("value", [21.37, -3.05, 0.0, 1.0, 0.1234, 1e-9, 123456.789, 2.5e15, -0.01, 1 / 3])
def test_a_raw_number_comes_back_exactly_whichever_column_keeps_it(tmp_path, value):
    store = HistoryStore(tmp_path / "history.db")
    store.write(Batch(points=[(*A, 1000, value)]))
    store.flush()
    assert store.raw(*A) == [(1000, value)]
    store.close()
