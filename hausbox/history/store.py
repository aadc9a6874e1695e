"""The local history store: its own SQLite file beside the main database.

Plain sqlite3, not Pony: one writer (the history worker's greenlet) inserts points in batches, and a
raw point must cost a few bytes, so the schema is two small tables and no ORM sits on the path.
``points`` is WITHOUT ROWID, keyed (series, ts): a point is its series' small integer id, a
timestamp in ms and a REAL, stored once in the key's b-tree. WAL with synchronous=NORMAL: a commit
is one WAL append; a power cut or kill -9 may lose the last commit, never corrupt the file.

Tiers (hourly and daily min/max/mean/sum, energy sums split hp/hc) and their downsampling and
retention are the next slice: they will be tables beside ``points`` created here, and a job of the
history worker that reads ``points`` and writes them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

FILE_NAME = "history.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    equipment_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    UNIQUE (equipment_id, alias)
);
CREATE TABLE IF NOT EXISTS points (
    series INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (series, ts)
) WITHOUT ROWID;
"""

Point = tuple[str, str, int, float]  # equipment id, alias, ts (ms), value


class HistoryStore:
    """The history file: series ids and raw points. Used from one greenlet at a time."""

    def __init__(self, path: Path):
        self.path = path
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self._series = {(e, a): i for i, e, a in self._db.execute("SELECT id, equipment_id, alias FROM series")}

    def write(self, points: list[Point]) -> None:
        """Insert ``points`` in one transaction (a point at the same ms as one stored replaces it)."""
        db = self._db
        db.execute("BEGIN")
        try:
            rows = [(self._series_id(e, a), ts, value) for e, a, ts, value in points]
            db.executemany("INSERT OR REPLACE INTO points (series, ts, value) VALUES (?, ?, ?)", rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            self._series = {(e, a): i for i, e, a in db.execute("SELECT id, equipment_id, alias FROM series")}
            raise

    def _series_id(self, equipment_id: str, alias: str) -> int:
        key = (equipment_id, alias)
        series = self._series.get(key)
        if series is None:
            series = self._db.execute("INSERT INTO series (equipment_id, alias) VALUES (?, ?)", key).lastrowid
            self._series[key] = series
        return series

    def raw(self, equipment_id: str, alias: str, from_ms: int = 0, to_ms: int | None = None) -> list[tuple[int, float]]:
        """The raw points of one series in [from_ms, to_ms), oldest first."""
        series = self._series.get((equipment_id, alias))
        if series is None:
            return []
        end = to_ms if to_ms is not None else 2**62
        return self._db.execute("SELECT ts, value FROM points WHERE series = ? AND ts >= ? AND ts < ? ORDER BY ts", (series, from_ms, end)).fetchall()

    def count(self) -> int:
        return self._db.execute("SELECT count(*) FROM points").fetchone()[0]

    def close(self) -> None:
        self._db.close()
