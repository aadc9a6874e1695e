"""The main database's tables as JSON rows, and those rows checked and loaded into a fresh database.

Every table is backed up but the migration bookkeeping and the ``backup_excludes`` of the
components. None is a pure cache: sessions (refresh tokens) are kept so that signed-in apps stay
signed in, the activity feed and recipe logs are small and bounded, and the instance identity
row is what tells a restored box from its source (the marker file never is in a backup).

A row is a JSON object keyed by column name. SQLite values map to JSON as they are (integer,
real, text, null); a BLOB is ``{"base64": "<standard base64>"}`` (no table has one today).
"""

from __future__ import annotations

import base64
import binascii
import math
import sqlite3
from pathlib import Path
from typing import Any, Iterable

SKIPPED = ("schema_migrations",)


class TableError(ValueError):
    """Rows that cannot be restored; the message names the table, the row index and the column."""


def backed_up(conn: sqlite3.Connection, excluded: Iterable[str]) -> list[str]:
    """The names of the tables a backup holds, sorted."""
    skip = set(SKIPPED) | set(excluded)
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    return [name for (name,) in names if name not in skip]


def export(db_path: Path, excluded: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Every backed-up table of the (closed, copied) database at ``db_path``, in one read transaction."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        conn.execute("BEGIN")
        tables: dict[str, list[dict[str, Any]]] = {}
        for name in backed_up(conn, excluded):
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            columns = [d[0] for d in cursor.description]
            tables[name] = [{c: _to_json(v) for c, v in zip(columns, row)} for row in cursor]
        conn.execute("COMMIT")
        return tables
    finally:
        conn.close()


def _to_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return value


def _affinity(declared: str) -> str:
    """SQLite's column affinity rules (https://sqlite.org/datatype3.html, 3.1)."""
    kind = declared.upper()
    if "INT" in kind:
        return "integer"
    if any(word in kind for word in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in kind or not kind:
        return "blob"
    if any(word in kind for word in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


def _from_json(value: Any, affinity: str, where: str) -> Any:
    """The SQLite value of a JSON value for a column of ``affinity``; a wrong type raises."""
    if value is None:
        return None  # NOT NULL is the database's to check
    if isinstance(value, dict):
        if affinity in ("blob", "numeric") and set(value) == {"base64"} and isinstance(value["base64"], str):
            try:
                return base64.b64decode(value["base64"], validate=True)
            except (binascii.Error, ValueError):
                raise TableError(f"{where}: not valid base64") from None
        raise TableError(f"{where}: an object is not a column value (a BLOB is {{\"base64\": ...}})")
    if isinstance(value, bool) or isinstance(value, list):
        raise TableError(f"{where}: a {type(value).__name__} is not a column value")
    number = isinstance(value, (int, float))
    if isinstance(value, float) and not math.isfinite(value):
        raise TableError(f"{where}: not a finite number")
    if affinity == "text" and not isinstance(value, str):
        raise TableError(f"{where}: expected text, got a number")
    if affinity in ("integer", "real") and not number:
        raise TableError(f"{where}: expected a number, got text")
    if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
        raise TableError(f"{where}: integer out of range")
    return value


def load(conn: sqlite3.Connection, tables: Any, excluded: Iterable[str]) -> dict[str, int]:
    """Put ``tables`` (the backup's ``tables`` object) into the freshly migrated database of
    ``conn``, in one transaction with foreign keys on and checked before the commit. A table the
    backup holds replaces what the migrations seeded in it; the ``excluded`` ones are skipped (a
    restore leaves them alone). Returns rows per table; raises ``TableError`` naming the problem."""
    if not isinstance(tables, dict):
        raise TableError("tables must be an object of table name -> array of rows")
    skip = set(excluded)
    known = {name: _columns(conn, name) for name in backed_up(conn, skip)}
    for name, rows in tables.items():
        if name in skip:
            continue
        if name not in known:
            raise TableError(f"Unknown table: {str(name)[:100]}")
        if not isinstance(rows, list):
            raise TableError(f"Table {name} must be an array of rows")
    wanted = [name for name in tables if name not in skip]
    conn.execute("PRAGMA foreign_keys = OFF")  # the seeds go first; the rows are checked below
    conn.execute("BEGIN")
    for name in wanted:
        conn.execute(f'DELETE FROM "{name}"')
    conn.execute("COMMIT")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("BEGIN")
    try:
        conn.execute("PRAGMA defer_foreign_keys = ON")  # rows in any order; checked before the commit
        counts: dict[str, int] = {}
        rowids: dict[tuple[str, int], int] = {}
        for name in wanted:
            columns = known[name]
            for index, row in enumerate(tables[name]):
                where = f"Table {name}, row {index}"
                if not isinstance(row, dict):
                    raise TableError(f"{where}: a row must be an object of column -> value")
                unknown = [c for c in row if c not in columns]
                if unknown:
                    raise TableError(f"{where}: unknown column {str(unknown[0])[:100]}")
                names = list(row)
                params = [_from_json(row[c], columns[c], f"{where}, column {c}") for c in names]
                sql = f'INSERT INTO "{name}" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in names)}) VALUES ({", ".join("?" * len(names))})'
                if not names:
                    sql = f'INSERT INTO "{name}" DEFAULT VALUES'
                try:
                    rowid = conn.execute(sql, params).lastrowid
                except sqlite3.IntegrityError as error:
                    raise TableError(f"{where}: {error}") from None
                if rowid:
                    rowids[(name, rowid)] = index
            counts[name] = len(tables[name])
        _check_foreign_keys(conn, rowids)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return counts


def _columns(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    return {row[1]: _affinity(row[2] or "") for row in conn.execute(f'PRAGMA table_info("{table}")')}


def _check_foreign_keys(conn: sqlite3.Connection, rowids: dict[tuple[str, int], int]) -> None:
    violation = conn.execute("PRAGMA foreign_key_check").fetchone()
    if violation is None:
        return
    table, rowid, parent, fk_id = violation
    column = next((row[3] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")') if row[0] == fk_id), "?")
    index = rowids.get((table, rowid))
    row = f"row {index}" if index is not None else "a row kept from the fresh database"
    raise TableError(f"Table {table}, {row}, column {column}: foreign key to {parent} does not resolve")


def keep_excluded(staged: sqlite3.Connection, live_db: Path, excluded: Iterable[str]) -> int:
    """Copy the live database's rows of the ``excluded`` tables into the staged one (replacing
    what it holds), in one transaction: a restore leaves them as they are. Returns rows copied."""
    names = list(excluded)
    if not names or not live_db.exists():
        return 0
    staged.execute("ATTACH DATABASE ? AS live", (f"file:{live_db}?mode=ro",))
    try:
        live = {n for (n,) in staged.execute("SELECT name FROM live.sqlite_master WHERE type = 'table'")}
        mine = {n for (n,) in staged.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")}
        copied = 0
        staged.execute("BEGIN")
        try:
            for name in names:
                if name not in live or name not in mine:
                    continue
                columns = [row[1] for row in staged.execute(f'PRAGMA live.table_info("{name}")')]
                shared = ", ".join(f'"{c}"' for c in columns if c in _columns(staged, name))
                staged.execute(f'DELETE FROM main."{name}"')
                copied += staged.execute(f'INSERT INTO main."{name}" ({shared}) SELECT {shared} FROM live."{name}"').rowcount
            staged.execute("COMMIT")
        except BaseException:
            staged.execute("ROLLBACK")
            raise
        return copied
    finally:
        staged.execute("DETACH DATABASE live")
