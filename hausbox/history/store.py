"""The local history store: its own SQLite file beside the main database.

Plain sqlite3, not Pony: one writer (the history worker's greenlet) inserts points in batches, and a
raw point must cost a few bytes, so the tables are small WITHOUT ROWID b-trees keyed by a small
series id and a timestamp in ms (a raw point is about 24 bytes on disk). WAL with
synchronous=NORMAL: a commit is one WAL append; a power cut or kill -9 may lose the last commit,
never corrupt the file.

Tiers, each with its retention (``TIERS``):
- ``points``: raw numbers (booleans as 1/0); ``text_points``: raw text and enum values;
- ``hourly`` and ``daily``: min, max, mean, sum and count per local hour and local day, made from
  the raw points by the downsampling job (``hausbox.history.jobs``) behind a watermark;
- ``energy_hourly`` and ``energy_daily``: Wh per local hour and day split peak/off-peak, added at
  write time in the same transaction as the points and the meters' baselines (``meters``), so a
  reading is counted once whatever happens to the process.

Every write goes through ``write`` (one transaction). Reads return plain tuples.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

FILE_NAME = "history.db"
DAY_MS = 86_400_000
YEAR_MS = 365 * DAY_MS

SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    equipment_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    UNIQUE (equipment_id, alias)
);
CREATE TABLE IF NOT EXISTS points (
    series INTEGER NOT NULL, ts INTEGER NOT NULL, value REAL NOT NULL, PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS text_points (
    series INTEGER NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hourly (
    series INTEGER NOT NULL, ts INTEGER NOT NULL,
    min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL, sum REAL NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS daily (
    series INTEGER NOT NULL, ts INTEGER NOT NULL,
    min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL, sum REAL NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS energy_hourly (
    series INTEGER NOT NULL, ts INTEGER NOT NULL, hp REAL NOT NULL, hc REAL NOT NULL, PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS energy_daily (
    series INTEGER NOT NULL, ts INTEGER NOT NULL, hp REAL NOT NULL, hc REAL NOT NULL, PRIMARY KEY (series, ts)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meters (
    series INTEGER PRIMARY KEY, reading REAL NOT NULL, ts INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY, done_until INTEGER NOT NULL, last_run INTEGER, last_status TEXT, last_error TEXT
);
"""

# name -> retention in ms. Raw points outlive their retention until they are downsampled.
TIERS = {
    "raw": 7 * DAY_MS,
    "hourly": 2 * YEAR_MS,
    "daily": 10 * YEAR_MS,
    "energy_hourly": 2 * YEAR_MS,
    "energy_daily": 10 * YEAR_MS,
}
TIER_TABLES = {"raw": ("points", "text_points"), "hourly": ("hourly",), "daily": ("daily",), "energy_hourly": ("energy_hourly",), "energy_daily": ("energy_daily",)}

Key = tuple[str, str]  # equipment id, alias
Point = tuple[str, str, int, float]  # equipment id, alias, ts (ms), value
TextPoint = tuple[str, str, int, str]
Aggregate = tuple[int, float, float, float, float, int]  # ts, min, max, mean, sum, count


@dataclass
class Batch:
    """What one commit writes: raw points, energy Wh per bucket, meter baselines, late-point marks."""

    points: list[Point] = field(default_factory=list)
    texts: list[TextPoint] = field(default_factory=list)
    energy_hourly: dict[tuple[Key, int], list[float]] = field(default_factory=dict)  # (key, hour) -> [hp, hc]
    energy_daily: dict[tuple[Key, int], list[float]] = field(default_factory=dict)
    meters: dict[Key, tuple[float, int]] = field(default_factory=dict)  # key -> (reading, ts)

    def __len__(self) -> int:
        return len(self.points) + len(self.texts)

    def empty(self) -> bool:
        return not (self.points or self.texts or self.energy_hourly or self.meters)

    def add_energy(self, key: Key, hour: int, day: int, hp: float, hc: float) -> None:
        for table, bucket in ((self.energy_hourly, hour), (self.energy_daily, day)):
            sums = table.setdefault((key, bucket), [0.0, 0.0])
            sums[0] += hp
            sums[1] += hc

    def merge_older(self, older: "Batch") -> None:
        """Put a batch that failed to commit back in front of this one."""
        self.points[:0] = older.points
        self.texts[:0] = older.texts
        for mine, theirs in ((self.energy_hourly, older.energy_hourly), (self.energy_daily, older.energy_daily)):
            for bucket, (hp, hc) in theirs.items():
                sums = mine.setdefault(bucket, [0.0, 0.0])
                sums[0] += hp
                sums[1] += hc
        for key, baseline in older.meters.items():
            self.meters.setdefault(key, baseline)


class HistoryStore:
    """The history file. Used from one greenlet at a time, never across a yield inside a transaction."""

    def __init__(self, path: Path):
        self.path = path
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._load_series()

    def _load_series(self) -> None:
        self._series = {(e, a): i for i, e, a in self._db.execute("SELECT id, equipment_id, alias FROM series")}

    # ---- writing ------------------------------------------------------------------------------------
    def write(self, batch: Batch, late_from: dict[str, int] | None = None) -> None:
        """Write ``batch`` in one transaction. ``late_from``: job name -> a time before which the
        batch holds points its job already passed, so the job's watermark moves back to it."""
        db = self._db
        with self._transaction(reload_series=True):
            sid = self._series_id
            db.executemany("INSERT OR REPLACE INTO points (series, ts, value) VALUES (?, ?, ?)", [(sid(e, a), ts, v) for e, a, ts, v in batch.points])
            db.executemany("INSERT OR REPLACE INTO text_points (series, ts, value) VALUES (?, ?, ?)", [(sid(e, a), ts, v) for e, a, ts, v in batch.texts])
            for table, sums in (("energy_hourly", batch.energy_hourly), ("energy_daily", batch.energy_daily)):
                db.executemany(
                    f"INSERT INTO {table} (series, ts, hp, hc) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (series, ts) DO UPDATE SET hp = hp + excluded.hp, hc = hc + excluded.hc",
                    [(sid(*key), bucket, hp, hc) for (key, bucket), (hp, hc) in sums.items()],
                )
            db.executemany("INSERT OR REPLACE INTO meters (series, reading, ts) VALUES (?, ?, ?)", [(sid(*key), reading, ts) for key, (reading, ts) in batch.meters.items()])
            for job, since in (late_from or {}).items():
                db.execute("UPDATE jobs SET done_until = ? WHERE name = ? AND done_until > ?", (since, job, since))

    @contextmanager
    def _transaction(self, reload_series: bool = False) -> Iterator[None]:
        """One transaction; on any failure rolled back (and the series ids it created forgotten)."""
        self._db.execute("BEGIN")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
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
        return dict(self._series)

    def meter_baselines(self) -> dict[Key, tuple[float, int]]:
        by_id = {i: key for key, i in self._series.items()}
        return {by_id[s]: (reading, ts) for s, reading, ts in self._db.execute("SELECT series, reading, ts FROM meters") if s in by_id}

    # ---- jobs: downsampling and retention (run by hausbox.history.jobs) ------------------------------
    def job(self, name: str, default_until: int) -> tuple[int, int | None, str | None, str | None]:
        """``(done_until, last_run, last_status, last_error)``; a new job starts at ``default_until``."""
        row = self._db.execute("SELECT done_until, last_run, last_status, last_error FROM jobs WHERE name = ?", (name,)).fetchone()
        if row is None:
            self._db.execute("INSERT INTO jobs (name, done_until) VALUES (?, ?)", (name, default_until))
            return default_until, None, None, None
        return row

    def watermark(self, name: str) -> int | None:
        """How far a job has gone (None: it never ran); read only."""
        row = self._db.execute("SELECT done_until FROM jobs WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def job_failed(self, name: str, now_ms: int, error: str) -> None:
        self._db.execute("UPDATE jobs SET last_run = ?, last_status = 'error', last_error = ? WHERE name = ?", (now_ms, error[:500], name))

    def downsample_hours(self, start: int, end: int, sub_hour: int, now_ms: int) -> int:
        """Hourly aggregates of every series' raw points in ``[start, end)`` (local hours shifted by
        ``sub_hour`` ms), and the job's watermark moved to ``end``, in one transaction."""
        db = self._db
        with self._transaction():
            rows = 0
            for series in self._series.values():
                rows += db.execute(
                    "INSERT OR REPLACE INTO hourly (series, ts, min, max, mean, sum, count) "
                    "SELECT series, ts - ((ts + ?) % 3600000) AS hour, min(value), max(value), avg(value), sum(value), count(*) "
                    "FROM points WHERE series = ? AND ts >= ? AND ts < ? GROUP BY hour",
                    (sub_hour, series, start, end),
                ).rowcount
            self._done("downsample-hourly", end, now_ms)
            db.execute("UPDATE jobs SET done_until = ? WHERE name = 'downsample-daily' AND done_until > ?", (start, start))
        return rows

    def downsample_days(self, days: list[tuple[int, int]], now_ms: int) -> int:
        """Daily aggregates, from the hourly tier, of the local days ``[(start, end), ...]``."""
        db = self._db
        with self._transaction():
            rows = 0
            for series in self._series.values():
                for start, end in days:
                    rows += db.execute(
                        "INSERT OR REPLACE INTO daily (series, ts, min, max, mean, sum, count) "
                        "SELECT series, ?, min(min), max(max), sum(mean * count) / sum(count), sum(sum), sum(count) "
                        "FROM hourly WHERE series = ? AND ts >= ? AND ts < ? GROUP BY series",
                        (start, series, start, end),
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
        return {name for (name,) in self._db.execute("SELECT name FROM jobs")}

    def expire(self, tier: str, before_ms: int, now_ms: int) -> int:
        """Delete ``tier``'s rows older than ``before_ms``, series by series (each an index range)."""
        db = self._db
        with self._transaction():
            deleted = 0
            for table in TIER_TABLES[tier]:
                for series in self._series.values():
                    deleted += db.execute(f"DELETE FROM {table} WHERE series = ? AND ts < ?", (series, before_ms)).rowcount
            self._done(f"retention-{tier}", before_ms, now_ms)
        return deleted

    # ---- reading ------------------------------------------------------------------------------------
    def raw(self, equipment_id: str, alias: str, from_ms: int = 0, to_ms: int | None = None, limit: int = -1) -> list[tuple[int, float]]:
        """The raw points of one series in [from_ms, to_ms), oldest first; the newest ``limit`` when set."""
        return self._range("points", equipment_id, alias, "ts, value", from_ms, to_ms, limit)

    def raw_text(self, equipment_id: str, alias: str, from_ms: int = 0, to_ms: int | None = None, limit: int = -1) -> list[tuple[int, str]]:
        return self._range("text_points", equipment_id, alias, "ts, value", from_ms, to_ms, limit)

    def aggregates(self, tier: str, equipment_id: str, alias: str, from_ms: int, to_ms: int | None = None) -> list[Aggregate]:
        """Rows of the ``hourly`` or ``daily`` tier in [from_ms, to_ms), oldest first."""
        assert tier in ("hourly", "daily")
        return self._range(tier, equipment_id, alias, "ts, min, max, mean, sum, count", from_ms, to_ms, -1)

    def energy(self, tier: str, equipment_id: str, alias: str, from_ms: int, to_ms: int) -> list[tuple[int, float, float]]:
        """``(bucket, hp_wh, hc_wh)`` rows of ``energy_hourly`` or ``energy_daily``."""
        assert tier in ("energy_hourly", "energy_daily")
        return self._range(tier, equipment_id, alias, "ts, hp, hc", from_ms, to_ms, -1)

    def _range(self, table: str, equipment_id: str, alias: str, columns: str, from_ms: int, to_ms: int | None, limit: int) -> list:
        series = self._series.get((equipment_id, alias))
        if series is None:
            return []
        end = to_ms if to_ms is not None else 2**62
        if limit < 0:
            return self._db.execute(f"SELECT {columns} FROM {table} WHERE series = ? AND ts >= ? AND ts < ? ORDER BY ts", (series, from_ms, end)).fetchall()
        rows = self._db.execute(f"SELECT {columns} FROM {table} WHERE series = ? AND ts >= ? AND ts < ? ORDER BY ts DESC LIMIT ?", (series, from_ms, end, limit)).fetchall()
        rows.reverse()
        return rows

    def window_means(self, key: Key, from_ms: int, to_ms: int, window_ms: int) -> dict[int, float]:
        """The mean of one series' raw points per window of ``window_ms`` from ``from_ms``."""
        series = self._series.get(key)
        if series is None:
            return {}
        query = "SELECT ts - ((ts - ?) % ?) AS w, avg(value) FROM points WHERE series = ? AND ts >= ? AND ts < ? GROUP BY w"
        return dict(self._db.execute(query, (from_ms, window_ms, series, from_ms, to_ms)).fetchall())

    def aliases_since(self, equipment_id: str, since_ms: int) -> list[str]:
        """The aliases of ``equipment_id`` with a point (raw, text or hourly) since ``since_ms``."""
        found = []
        for (eq, alias), series in sorted(self._series.items(), key=lambda item: item[0][1]):
            if eq != equipment_id:
                continue
            for table in ("points", "text_points", "hourly", "energy_hourly"):
                if self._db.execute(f"SELECT 1 FROM {table} WHERE series = ? AND ts >= ? LIMIT 1", (series, since_ms)).fetchone():
                    found.append(alias)
                    break
        return found

    def count(self, table: str = "points") -> int:
        return self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def size_bytes(self) -> int:
        page_size = self._db.execute("PRAGMA page_size").fetchone()[0]
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        return page_size * pages

    def close(self) -> None:
        self._db.close()
