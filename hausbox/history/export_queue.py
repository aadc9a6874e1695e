"""The export's on-disk queue: line-protocol lines waiting for the InfluxDB server, oldest first.

Its own small SQLite file in the data directory (WAL, synchronous=NORMAL, like the history store),
so that points wait through an outage and a restart. Bounded: past the bound the oldest lines go,
and how many went is counted in the file too. Rows are only ever taken from the old end (sent, or
overflowed) and added at the new end, so rowids stay in order. Used from one greenlet at a time.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS lines (id INTEGER PRIMARY KEY, line TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class ExportQueue:
    def __init__(self, path: Path, bound: int):
        self.path = path
        self.bound = bound
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self.count = self._db.execute("SELECT count(*) FROM lines").fetchone()[0]
        row = self._db.execute("SELECT value FROM counters WHERE name = 'dropped'").fetchone()
        self.dropped = row[0] if row else 0  # lines the bound pushed out, since the file was made

    def append(self, lines: list[str]) -> int:
        """Add ``lines`` at the new end in one transaction; returns how many old lines the bound pushed out."""
        if not lines:
            return 0
        overflow = max(0, self.count + len(lines) - self.bound)
        skipped = max(0, len(lines) - self.bound)  # a batch larger than the bound keeps its newest
        db = self._db
        db.execute("BEGIN")
        try:
            db.executemany("INSERT INTO lines (line) VALUES (?)", ((line,) for line in lines[skipped:]))
            if overflow > skipped:
                db.execute("DELETE FROM lines WHERE id IN (SELECT id FROM lines ORDER BY id LIMIT ?)", (overflow - skipped,))
            if overflow:
                db.execute("INSERT OR REPLACE INTO counters (name, value) VALUES ('dropped', ?)", (self.dropped + overflow,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.count += len(lines) - overflow
        self.dropped += overflow
        return overflow

    def oldest(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` (rowid, line) pairs from the old end."""
        return self._db.execute("SELECT id, line FROM lines ORDER BY id LIMIT ?", (limit,)).fetchall()

    def remove_through(self, last_id: int) -> int:
        """Remove every line up to rowid ``last_id`` (a batch sent or refused); returns how many."""
        removed = self._db.execute("DELETE FROM lines WHERE id <= ?", (last_id,)).rowcount
        self.count -= removed
        return removed

    def close(self) -> None:
        self._db.close()
