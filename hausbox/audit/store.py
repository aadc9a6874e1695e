"""The ``audit_entries`` table: batch writes and retention chunks (run in a thread), and the reads.

Writes go through their own short-lived connection in gevent's thread pool: SQLite waits for a
lock inside the C library, which would stall every greenlet of the process if it ran on the hub.
A locked or full database then delays the audit worker only, never a request.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Iterable, Sequence

import orjson
from pony import orm

from hausbox.audit.entry import Row
from hausbox.core import database
from hausbox.core.clock import iso_utc

COLUMNS = "ts, user_id, username, role, credential, method, route, action, target, outcome, status, address, user_agent"
INSERT = f"INSERT INTO audit_entries ({COLUMNS}) VALUES ({', '.join('?' * len(Row._fields))})"
SELECT = f"SELECT id, {COLUMNS} FROM audit_entries"


def _encoded(row: Row) -> tuple[Any, ...]:
    target = row.target
    return row._replace(target=orjson.dumps(target).decode() if target is not None else None)


def insert(path: Path, rows: Sequence[Row]) -> None:
    """Write ``rows`` in one transaction (in a thread: see the module docstring)."""
    conn = database.connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(INSERT, [_encoded(row) for row in rows])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


def delete_older(path: Path, cutoff_ms: int, chunk: int) -> int:
    """Delete up to ``chunk`` entries older than ``cutoff_ms``; how many went (in a thread)."""
    conn = database.connect(path)
    try:
        cursor = conn.execute(
            "DELETE FROM audit_entries WHERE id IN (SELECT id FROM audit_entries WHERE ts < ? ORDER BY ts LIMIT ?)", (cutoff_ms, chunk)
        )
        return cursor.rowcount
    finally:
        conn.close()


# ---- reading -------------------------------------------------------------------------------------
def encode_cursor(ts: int, entry_id: int) -> str:
    return base64.urlsafe_b64encode(f"{ts}.{entry_id}".encode()).decode().rstrip("=")


def decode_cursor(text: str) -> tuple[int, int]:
    """``(ts, id)`` of a cursor; ValueError for anything that is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not a cursor")
    ts, dot, entry_id = raw.partition(".")
    if not dot:
        raise ValueError("not a cursor")
    return sql_int(ts), sql_int(entry_id)


def sql_int(text: str) -> int:
    """An integer SQLite can bind (64-bit); ValueError for anything else."""
    value = int(text)
    if not -(1 << 63) <= value < 1 << 63:
        raise ValueError("out of range")
    return value


def page(db: orm.Database, filters: Iterable[tuple[str, Any]], cursor: tuple[int, int] | None, limit: int) -> tuple[list[dict[str, Any]], str | None]:
    """Entries newest first (ts, then id) matching every ``(condition, value)`` (each ``?`` of a
    condition is its value), after ``cursor``; and the next page's cursor (None on the last one)."""
    conditions: list[str] = []
    args: dict[str, Any] = {"limit": limit + 1}
    for number, (condition, value) in enumerate(filters):
        conditions.append(condition.replace("?", f"$p{number}"))
        args[f"p{number}"] = value
    if cursor is not None:
        conditions.append("(ts < $cts OR (ts = $cts AND id < $cid))")
        args["cts"], args["cid"] = cursor
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    with orm.db_session:
        rows = db.select(f"{SELECT}{where} ORDER BY ts DESC, id DESC LIMIT $limit", args)
    entries = [_json(row) for row in rows[:limit]]
    last = entries[-1] if len(rows) > limit else None
    return entries, encode_cursor(last["ts"], last["id"]) if last is not None else None


def _json(row: Sequence[Any]) -> dict[str, Any]:
    entry_id, ts, user_id, username, role, credential, method, route, action, target, outcome, status, address, agent = row
    return {
        "id": entry_id, "ts": ts, "time": iso_utc(ts),
        "userId": user_id, "username": username, "role": role, "credential": credential,
        "method": method, "route": route, "action": action, "target": orjson.loads(target) if target else None,
        "outcome": outcome, "status": status, "address": address, "userAgent": agent,
    }  # fmt: skip

