"""The SQLite database: versioned migrations, then PonyORM entities mapped onto the migrated schema.

Schema changes are SQL files ``NNNN_name.sql`` (``core/migrations/``, and a component's own
``migrations`` package), applied in version order at start-up, each in its own transaction and
recorded in ``schema_migrations``. Versions are one sequence across every package. Pony never creates tables: it only checks
that its entities match what the migrations built.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable

from pony import orm

log = logging.getLogger("hausbox.database")

EntityDefiner = Callable[[orm.Database], None]
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class SchemaTooNew(RuntimeError):
    """The database was written by a newer hausbox than the one starting."""


CORE_MIGRATIONS = "hausbox.core.migrations"


def migration_packages() -> list[str]:
    """The packages holding migrations: the core's, then every component's. Asked of the components
    each time, so what a database is migrated to never depends on whether an engine was built first."""
    from hausbox.core.components import discover  # at call time: the components import the domains

    return [CORE_MIGRATIONS] + [c.migrations for c in discover() if c.migrations is not None]


def available_migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every migration shipped, in version order; a version used twice raises."""
    found: dict[int, tuple[int, str, str]] = {}
    for package in migration_packages():
        for entry in resources.files(package).iterdir():
            match = _MIGRATION_NAME.match(entry.name)
            if not match:
                continue
            version = int(match.group(1))
            if version in found:
                raise RuntimeError(f"migration {version:04d} shipped twice ({found[version][1]}, {match.group(2)})")
            found[version] = (version, match.group(2), entry.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


def _statements(sql: str) -> Iterable[str]:
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        yield buffer


def connect(path: Path) -> sqlite3.Connection:
    """A raw connection with the pragmas every connection of ours uses."""
    conn = sqlite3.connect(str(path), timeout=10, isolation_level=None)
    _apply_pragmas(conn)
    return conn


def _apply_pragmas(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    # FULL: an acknowledged write survives a power cut, which an unplugged appliance will see.
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA busy_timeout = 10000")


def migrate(path: Path, up_to: int | None = None) -> int:
    """Apply pending migrations (all, or up to version ``up_to``); return the schema version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
        )
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        shipped = available_migrations()
        newest_shipped = shipped[-1][0] if shipped else 0
        if applied and max(applied) > newest_shipped:
            raise SchemaTooNew(
                f"database schema version {max(applied)} is newer than this release knows ({newest_shipped})"
            )
        for version, name, sql in shipped:
            if version in applied or (up_to is not None and version > up_to):
                continue
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, int(time.time() * 1000)),
                )
                conn.execute("COMMIT")
            except Exception:
                conn.execute("ROLLBACK")
                raise
            log.info("applied migration %04d_%s", version, name)
        return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
    finally:
        conn.close()


def open_database(path: Path, definers: Iterable[EntityDefiner]) -> orm.Database:
    """Migrate the file at ``path``, then bind a Pony database whose entities the definers declare."""
    migrate(path)
    db = orm.Database()
    for define in definers:
        define(db)

    @db.on_connect(provider="sqlite")
    def _on_connect(_db: orm.Database, conn: sqlite3.Connection) -> None:
        _apply_pragmas(conn)

    db.bind(provider="sqlite", filename=str(path))
    db.generate_mapping(create_tables=False, check_tables=True)
    return db
