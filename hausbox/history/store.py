"""The local history store: its own SQLite file beside the main database, and its journal.

Plain sqlite3, not Pony: one writer (the history worker's greenlet) inserts points in batches, and a
raw point must cost a few bytes, so the tables are small WITHOUT ROWID b-trees keyed by a
timestamp in ms and a small series id (a raw point is about 24 bytes on disk). Time first, so new
rows go to the end of each table: a flush writes new pages once and rewrites only the last page
and the right edge above it (1 KB pages); a series' range is one scan of the range's rows, and
retention deletes the start of a table.

Writes reach SQLite in two steps, to spare the SD card: ``write`` appends each commit's batch to
the journal (``hausbox.history.journal``: durable against kill -9, a few hundred bytes) and keeps it
in memory, where every read sees it; ``flush`` moves it all into SQLite in one transaction every
half hour (and before the jobs run, and at stop). SQLite uses a rollback journal with
synchronous=FULL: a flush survives a power cut, and the pages it appends are written once.

The core is never the one waiting on SQLite: a transaction ends in fsyncs, which an SD card may take
a second to answer, and a series' day is a scan of the whole house's day. Each use of the
connection takes a turn (``_turn``: one greenlet at a time, the others wait in theirs), and within
it scans and writing transactions run in gevent's thread pool (``_in_thread``) while the core
serves messages and requests. A turn also keeps what SQLite holds and what waits in memory in step:
no read sees a batch in both, or in neither.

Tiers, each with its retention (``TIERS``):
- ``points``: raw numbers (booleans as 1/0); ``text_points``: raw text and enum values;
- ``hourly`` and ``daily``: min, max, mean, sum and count per local hour and local day, made from
  the raw points by the downsampling job (``hausbox.history.jobs``) behind a watermark;
- ``energy_hourly`` and ``energy_daily``: Wh per local hour and day split peak/off-peak, added at
  write time in the same batch as the points and the meters' baselines (``meters``), so a reading
  is counted once whatever happens to the process.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from gevent.event import AsyncResult
from gevent.lock import RLock

from hausbox.core.workers import started_in_thread
from hausbox.history.batch import Aggregate, Baseline, Batch, Key
from hausbox.history.journal import Journal
from hausbox.history.recent import SLOTS, WINDOW_MS, RecentWindows

log = logging.getLogger("hausbox.history")

FILE_NAME = "history.db"
DAY_MS = 86_400_000
YEAR_MS = 365 * DAY_MS

PAGE_SIZE = 1024  # a commit rewrites the last page of each table it touches: small pages, few bytes
LAYOUT = 4
JOURNAL_NAME = "history-pending.log"
JOURNAL_JOB = "journal-flushed"  # its done_until: the last journal sequence SQLite holds
# A raw number is kept in hundredths as a small integer (2-3 bytes) when that is exact, the usual case
# for a sensor, else as a REAL in ``value`` (8 bytes); the other column is NULL (no byte at all).
POINTS_TABLE = """CREATE TABLE IF NOT EXISTS points (
    ts INTEGER NOT NULL, series INTEGER NOT NULL, centi INTEGER, value REAL, PRIMARY KEY (ts, series)
) WITHOUT ROWID"""
VALUE = "coalesce(value, centi / 100.0)"  # a raw point's number, in SQL


def encoded(value: float) -> tuple[int | None, float | None]:
    """``(centi, value)`` as the points table keeps ``value``: exact either way."""
    centi = round(value * 100) if abs(value) < 1e13 else None
    if centi is not None and centi / 100 == value:
        return centi, None
    return None, value

SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    equipment_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    UNIQUE (equipment_id, alias)
);
CREATE TABLE IF NOT EXISTS text_points (
    ts INTEGER NOT NULL, series INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (ts, series)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hourly (
    ts INTEGER NOT NULL, series INTEGER NOT NULL,
    min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL, sum REAL NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (ts, series)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS daily (
    ts INTEGER NOT NULL, series INTEGER NOT NULL,
    min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL, sum REAL NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (ts, series)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS energy_hourly (
    ts INTEGER NOT NULL, series INTEGER NOT NULL, hp REAL NOT NULL, hc REAL NOT NULL, PRIMARY KEY (ts, series)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS energy_daily (
    ts INTEGER NOT NULL, series INTEGER NOT NULL, hp REAL NOT NULL, hc REAL NOT NULL, PRIMARY KEY (ts, series)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meters (
    series INTEGER PRIMARY KEY, reading REAL NOT NULL, ts INTEGER NOT NULL, source TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY, done_until INTEGER NOT NULL, last_run INTEGER, last_status TEXT, last_error TEXT
);
""" + POINTS_TABLE + ";"

# name -> retention in ms. Raw points outlive their retention until they are downsampled.
TIERS = {
    "raw": 7 * DAY_MS,
    "hourly": 2 * YEAR_MS,
    "daily": 10 * YEAR_MS,
    "energy_hourly": 2 * YEAR_MS,
    "energy_daily": 10 * YEAR_MS,
}
TIER_TABLES = {"raw": ("points", "text_points"), "hourly": ("hourly",), "daily": ("daily",), "energy_hourly": ("energy_hourly",), "energy_daily": ("energy_daily",)}

class HistoryStore:
    """The history file and its journal, used by one greenlet at a time (``_turn``). What ``write``
    took is readable at once (reads add what waits in memory)."""

    def __init__(self, path: Path):
        self.path = path
        self._turns = RLock()
        self._running: AsyncResult | None = None  # the last work handed to a thread
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # only takes on a new file
        # A rollback journal, not WAL: a flush appends new pages, written once; WAL writes each twice.
        self._db.execute("PRAGMA journal_mode=TRUNCATE")
        self._db.execute("PRAGMA synchronous=FULL")  # a flush is rare: make it survive a power cut
        self._upgrade()
        self._db.executescript(SCHEMA)
        self._db.execute(f"PRAGMA user_version={LAYOUT}")
        self._load_series()
        self._pending = Batch()  # journaled, not yet in SQLite
        self._late: dict[str, int] = {}
        self._recent = RecentWindows()  # built at the first sparkline
        self._journal = Journal(path.with_name(JOURNAL_NAME))
        self._replay()

    def _replay(self) -> None:
        """What the journal holds past the last flush goes back to memory, then to SQLite."""
        flushed = self.watermark(JOURNAL_JOB) or 0
        for sequence, body in self._journal.replay():
            if sequence > flushed:
                self._take(Batch.from_document(body), body.get("l"))
        self._journal.sequence = max(self._journal.sequence, flushed)
        if not self._pending.empty():
            log.info("history: %d point(s) taken back from the journal", len(self._pending))
            try:
                self.flush()
            except sqlite3.Error as error:  # kept in memory and in the journal: the writer retries
                log.error("history: the journal could not be moved to the store: %s", error)

    def _upgrade(self) -> None:
        """Earlier layouts: points keyed (series, ts), then REAL values only, copied into this one;
        meters without the device datum of their baseline, which those baselines then take."""
        meters = self._db.execute("SELECT sql FROM sqlite_master WHERE name = 'meters'").fetchone()
        if meters is not None and "source" not in meters[0]:
            self._db.execute("ALTER TABLE meters ADD COLUMN source TEXT")
        row = self._db.execute("SELECT sql FROM sqlite_master WHERE name = 'points'").fetchone()
        if row is None or "centi" in row[0]:
            return
        with self._transaction():
            self._db.execute("ALTER TABLE points RENAME TO points_v1")
            self._db.execute(POINTS_TABLE)
            self._db.execute("INSERT INTO points (ts, series, value) SELECT ts, series, value FROM points_v1")
            self._db.execute("DROP TABLE points_v1")

    def _load_series(self) -> None:
        self._series = {(e, a): i for i, e, a in self._db.execute("SELECT id, equipment_id, alias FROM series")}

    # ---- writing ------------------------------------------------------------------------------------
    def write(self, batch: Batch, late_from: dict[str, int] | None = None) -> None:
        """Make ``batch`` durable (one journal append) and readable; SQLite gets it at ``flush``.
        ``late_from``: job name -> a time before which the batch holds points its job already
        passed, so the job's watermark moves back to it."""
        with self._turn():
            self._journal.append(batch.document(late_from))  # a few hundred bytes to the page cache
            self._take(batch, late_from)

    def _take(self, batch: Batch, late_from: dict[str, int] | None) -> None:
        self._pending.merge(batch)
        self._recent.add(batch.points)
        for job, since in (late_from or {}).items():
            self._late[job] = min(self._late.get(job, since), since)

    @property
    def pending(self) -> int:
        """Points journaled and not yet in SQLite."""
        return len(self._pending)

    def flush(self) -> int:
        """Move what is pending into SQLite in one transaction, then start the journal again."""
        with self._turn():
            if self._pending.empty() and not self._late:
                return 0
            return self._in_thread(self._flush)

    def _flush(self) -> int:
        batch, late = self._pending, self._late
        db = self._db
        with self._transaction(reload_series=True):
            sid = self._series_id
            db.executemany("INSERT OR REPLACE INTO points (ts, series, centi, value) VALUES (?, ?, ?, ?)", [(ts, sid(e, a), *encoded(v)) for e, a, ts, v in batch.points])
            db.executemany("INSERT OR REPLACE INTO text_points (ts, series, value) VALUES (?, ?, ?)", [(ts, sid(e, a), v) for e, a, ts, v in batch.texts])
            for table, sums in (("energy_hourly", batch.energy_hourly), ("energy_daily", batch.energy_daily)):
                db.executemany(
                    f"INSERT INTO {table} (ts, series, hp, hc) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (ts, series) DO UPDATE SET hp = hp + excluded.hp, hc = hc + excluded.hc",
                    [(bucket, sid(*key), hp, hc) for (key, bucket), (hp, hc) in sums.items()],
                )
            db.executemany("INSERT OR REPLACE INTO meters (series, reading, ts, source) VALUES (?, ?, ?, ?)", [(sid(*key), *baseline) for key, baseline in batch.meters.items()])
            for job, since in late.items():
                db.execute("UPDATE jobs SET done_until = ? WHERE name = ? AND done_until > ?", (since, job, since))
            self._done(JOURNAL_JOB, self._journal.sequence, 0)  # with the data: a replay skips what is here
        self._pending, self._late = Batch(), {}
        self._journal.clear()
        return len(batch)

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """The connection and the memory beside it, to this greenlet alone; the others wait in
        theirs. A turn starts once the last thread's work has ended, not merely its caller's turn:
        a worker killed while it waited (a stop) leaves its transaction to finish first."""
        with self._turns:
            while self._running is not None and not self._running.ready():
                self._running.wait()
            yield

    def _in_thread(self, work: Callable[..., Any], *args: Any) -> Any:
        """Within a turn: SQLite work that may take a while (a scan, a transaction and its fsyncs),
        in the thread pool; this greenlet waits, the core does not."""
        self._running = started_in_thread(work, *args)
        return self._running.get()

    def _fetch(self, sql: str, params: tuple = ()) -> list:
        """Within a turn: a query's rows, read in a thread."""
        return self._in_thread(lambda: self._db.execute(sql, params).fetchall())

    @contextmanager
    def _transaction(self, reload_series: bool = False) -> Iterator[None]:
        """One transaction; on any failure rolled back (and the series ids it created forgotten)."""
        self._db.execute("BEGIN")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:  # SQLite rolls back by itself on some errors (a full disk)
                self._db.execute("ROLLBACK")
            if reload_series:
                self._load_series()
            raise

    def _series_id(self, equipment_id: str, alias: str) -> int:
        key = (equipment_id, alias)
        series = self._series.get(key)
        if series is None:
            series = self._db.execute("INSERT INTO series (equipment_id, alias) VALUES (?, ?)", key).lastrowid
            self._series[key] = series
        return series

    def series_of(self, equipment_id: str, alias: str) -> int | None:
        return self._series.get((equipment_id, alias))

    def all_series(self) -> dict[Key, int]:
        with self._turn():
            return dict(self._series)

    def meter_baselines(self) -> dict[Key, Baseline]:
        with self._turn():
            by_id = {i: key for key, i in self._series.items()}
            rows = self._fetch("SELECT series, reading, ts, source FROM meters")
            return {**{by_id[s]: (reading, ts, source) for s, reading, ts, source in rows if s in by_id}, **self._pending.meters}

    # ---- jobs: downsampling and retention (run by hausbox.history.jobs) ------------------------------
    def job(self, name: str, default_until: int) -> tuple[int, int | None, str | None, str | None]:
        """``(done_until, last_run, last_status, last_error)``; a new job starts at ``default_until``."""
        with self._turn():  # a key look-up in a table of a few rows: on the core
            row = self._db.execute("SELECT done_until, last_run, last_status, last_error FROM jobs WHERE name = ?", (name,)).fetchone()
            if row is None:
                self._in_thread(self._db.execute, "INSERT INTO jobs (name, done_until) VALUES (?, ?)", (name, default_until))
                return default_until, None, None, None
            return row

    def watermark(self, name: str) -> int | None:
        """How far a job has gone (None: it never ran), a late point waiting to be flushed included."""
        with self._turn():
            row = self._db.execute("SELECT done_until FROM jobs WHERE name = ?", (name,)).fetchone()
            if row is None:
                return None
            return min(row[0], self._late.get(name, row[0]))

    def job_failed(self, name: str, now_ms: int, error: str) -> None:
        with self._turn():
            self._in_thread(self._db.execute, "UPDATE jobs SET last_run = ?, last_status = 'error', last_error = ? WHERE name = ?", (now_ms, error[:500], name))

    def downsample_hours(self, start: int, end: int, sub_hour: int, now_ms: int) -> int:
        """Hourly aggregates of every series' raw points in ``[start, end)`` (local hours shifted by
        ``sub_hour`` ms), and the job's watermark moved to ``end``, in one transaction."""
        with self._turn():
            return self._in_thread(self._downsample_hours, start, end, sub_hour, now_ms)

    def _downsample_hours(self, start: int, end: int, sub_hour: int, now_ms: int) -> int:
        db = self._db
        with self._transaction():
            rows = db.execute(
                "INSERT OR REPLACE INTO hourly (ts, series, min, max, mean, sum, count) "
                f"SELECT ts - ((ts + ?) % 3600000) AS hour, series, min({VALUE}), max({VALUE}), avg({VALUE}), sum({VALUE}), count(*) "
                "FROM points WHERE ts >= ? AND ts < ? GROUP BY hour, series",
                (sub_hour, start, end),
            ).rowcount
            self._done("downsample-hourly", end, now_ms)
            db.execute("UPDATE jobs SET done_until = ? WHERE name = 'downsample-daily' AND done_until > ?", (start, start))
        return rows

    def downsample_days(self, days: list[tuple[int, int]], now_ms: int) -> int:
        """Daily aggregates, from the hourly tier, of the local days ``[(start, end), ...]``."""
        with self._turn():
            return self._in_thread(self._downsample_days, days, now_ms)

    def _downsample_days(self, days: list[tuple[int, int]], now_ms: int) -> int:
        db = self._db
        with self._transaction():
            rows = 0
            for start, end in days:
                rows += db.execute(
                    "INSERT OR REPLACE INTO daily (ts, series, min, max, mean, sum, count) "
                    "SELECT ?, series, min(min), max(max), sum(mean * count) / sum(count), sum(sum), sum(count) "
                    "FROM hourly WHERE ts >= ? AND ts < ? GROUP BY series",
                    (start, start, end),
                ).rowcount
            self._done("downsample-daily", days[-1][1], now_ms)
        return rows

    def _done(self, name: str, until: int, now_ms: int) -> None:
        self._db.execute(
            "INSERT INTO jobs (name, done_until, last_run, last_status) VALUES (?, ?, ?, 'ok') ON CONFLICT (name) "
            "DO UPDATE SET done_until = excluded.done_until, last_run = excluded.last_run, last_status = 'ok', last_error = NULL",
            (name, until, now_ms),
        )

    def job_names(self) -> set[str]:
        with self._turn():
            return {name for (name,) in self._db.execute("SELECT name FROM jobs")}

    def expire(self, tier: str, before_ms: int, now_ms: int) -> int:
        """Delete ``tier``'s rows older than ``before_ms`` (the start of each table: keys begin with the time)."""
        with self._turn():
            return self._in_thread(self._expire, tier, before_ms, now_ms)

    def _expire(self, tier: str, before_ms: int, now_ms: int) -> int:
        db = self._db
        with self._transaction():
            deleted = 0
            for table in TIER_TABLES[tier]:
                deleted += db.execute(f"DELETE FROM {table} WHERE ts < ?", (before_ms,)).rowcount
            self._done(f"retention-{tier}", before_ms, now_ms)
        return deleted

    # ---- reading ------------------------------------------------------------------------------------
    def raw(self, equipment_id: str, alias: str, from_ms: int = 0, to_ms: int | None = None, limit: int = -1) -> list[tuple[int, float]]:
        """The raw points of one series in [from_ms, to_ms), oldest first; the newest ``limit`` when set."""
        with self._turn():
            return self._raw("points", self._pending.points, equipment_id, alias, from_ms, to_ms, limit)

    def raw_text(self, equipment_id: str, alias: str, from_ms: int = 0, to_ms: int | None = None, limit: int = -1) -> list[tuple[int, str]]:
        with self._turn():
            return self._raw("text_points", self._pending.texts, equipment_id, alias, from_ms, to_ms, limit)

    def _raw(self, table: str, pending: list, equipment_id: str, alias: str, from_ms: int, to_ms: int | None, limit: int) -> list:
        end = to_ms if to_ms is not None else 2**62
        waiting = {ts: v for e, a, ts, v in pending if ts >= from_ms and ts < end and a == alias and e == equipment_id}
        stored = self._range(table, equipment_id, alias, f"ts, {VALUE if table == 'points' else 'value'}", from_ms, end, -1 if waiting else limit)
        if waiting:
            stored = sorted({**dict(stored), **waiting}.items())  # a pending point replaces a stored one at its ms
            return stored[-limit:] if limit >= 0 else stored
        return stored

    def aggregates(self, tier: str, equipment_id: str, alias: str, from_ms: int, to_ms: int | None = None) -> list[Aggregate]:
        """Rows of the ``hourly`` or ``daily`` tier in [from_ms, to_ms), oldest first."""
        with self._turn():
            assert tier in ("hourly", "daily")
            return self._range(tier, equipment_id, alias, "ts, min, max, mean, sum, count", from_ms, to_ms, -1)

    def energy(self, tier: str, equipment_id: str, alias: str, from_ms: int, to_ms: int) -> list[tuple[int, float, float]]:
        """``(bucket, hp_wh, hc_wh)`` rows of ``energy_hourly`` or ``energy_daily`` (and what is pending)."""
        with self._turn():
            assert tier in ("energy_hourly", "energy_daily")
            rows = self._range(tier, equipment_id, alias, "ts, hp, hc", from_ms, to_ms, -1)
            pending = self._pending.energy_hourly if tier == "energy_hourly" else self._pending.energy_daily
            waiting = [(bucket, hp, hc) for (key, bucket), (hp, hc) in pending.items() if key == (equipment_id, alias) and from_ms <= bucket < to_ms]
            if not waiting:
                return rows
            sums = {ts: [hp, hc] for ts, hp, hc in rows}
            for bucket, hp, hc in waiting:
                into = sums.setdefault(bucket, [0.0, 0.0])
                into[0] += hp
                into[1] += hc
            return [(ts, hp, hc) for ts, (hp, hc) in sorted(sums.items())]

    def _range(self, table: str, equipment_id: str, alias: str, columns: str, from_ms: int, to_ms: int | None, limit: int) -> list:
        series = self._series.get((equipment_id, alias))
        if series is None:
            return []
        end = to_ms if to_ms is not None else 2**62
        if limit < 0:
            return self._fetch(f"SELECT {columns} FROM {table} WHERE ts >= ? AND ts < ? AND series = ? ORDER BY ts", (from_ms, end, series))
        rows = self._fetch(f"SELECT {columns} FROM {table} WHERE ts >= ? AND ts < ? AND series = ? ORDER BY ts DESC LIMIT ?", (from_ms, end, series, limit))
        rows.reverse()
        return rows

    def window_means(self, keys: list[Key], from_ms: int, to_ms: int, window_ms: int) -> dict[int, list[float]]:
        """Per window of ``window_ms`` from ``from_ms``: the mean of each series of ``keys`` with raw
        points in it (one scan of the range for all of them, and what is pending). Half-hours of the
        last day come from memory (``hausbox.history.recent``)."""
        with self._turn():
            if window_ms == WINDOW_MS:
                if self._recent.covered_from is None:
                    self._build_recent(to_ms)
                means = self._recent.means(keys, from_ms, to_ms)
                if means is not None:
                    return means
            sums: dict[tuple[object, int], list[float]] = {}
            ids = [self._series[key] for key in keys if key in self._series]
            if ids:
                marks = ", ".join("?" * len(ids))
                query = f"SELECT series, ts - ((ts - ?) % ?) AS w, sum({VALUE}), count(*) FROM points WHERE ts >= ? AND ts < ? AND series IN ({marks}) GROUP BY series, w"
                for series, window, total, count in self._fetch(query, (from_ms, window_ms, from_ms, to_ms, *ids)):
                    sums[(series, window)] = [total, count]
            wanted = set(keys)
            for e, a, ts, value in self._pending.points:
                if from_ms <= ts < to_ms and (e, a) in wanted:
                    into = sums.setdefault((self._series.get((e, a), (e, a)), ts - (ts - from_ms) % window_ms), [0.0, 0])
                    into[0] += value
                    into[1] += 1
            means: dict[int, list[float]] = {}
            for (_series, window), (total, count) in sums.items():
                means.setdefault(window, []).append(total / count)
            return means

    def _build_recent(self, now_ms: int) -> None:
        """One scan of the points table's last ``SLOTS`` half-hours, and what is pending."""
        covered_from = now_ms - now_ms % WINDOW_MS - (SLOTS - 1) * WINDOW_MS
        by_id = {i: key for key, i in self._series.items()}
        query = f"SELECT series, ts - ts % {WINDOW_MS}, sum({VALUE}), count(*), max(ts) FROM points WHERE ts >= ? GROUP BY 1, 2"
        rows = ((by_id[series], *sums) for series, *sums in self._fetch(query, (covered_from,)) if series in by_id)
        self._recent.build(covered_from, rows, self._pending.points)

    def aliases_since(self, equipment_id: str, since_ms: int) -> list[str]:
        """The aliases of ``equipment_id`` with data since ``since_ms``: the hourly tier up to its
        watermark, raw points after it, text points, energy sums (each one range of a table) and
        what is pending."""
        with self._turn():
            made = self.watermark("downsample-hourly") or since_ms
            found: set[int] = set()
            for table, start in (("hourly", since_ms), ("points", max(since_ms, made)), ("text_points", since_ms), ("energy_hourly", since_ms)):
                found.update(series for (series,) in self._fetch(f"SELECT DISTINCT series FROM {table} WHERE ts >= ?", (start,)))
            aliases = {alias for (eq, alias), series in self._series.items() if eq == equipment_id and series in found}
            pending = self._pending
            aliases.update(a for e, a, ts, _v in pending.points + pending.texts if e == equipment_id and ts >= since_ms)
            aliases.update(key[1] for key, bucket in pending.energy_hourly if key[0] == equipment_id and bucket >= since_ms)
            return sorted(aliases)

    def count(self, table: str = "points") -> int:
        with self._turn():
            return self._fetch(f"SELECT count(*) FROM {table}")[0][0]

    def size_bytes(self) -> int:
        with self._turn():
            page_size = self._db.execute("PRAGMA page_size").fetchone()[0]
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            return page_size * pages

    def close(self) -> None:
        with self._turn():
            self._db.close()
            self._journal.close()
