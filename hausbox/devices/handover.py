"""The one-off upgrade to migration 0011: device values the database held, handed over to the snapshot.

Migration 0011 moved the volatile state out of the database into two handover tables. At the first
start after it, the values are read from them, written into the snapshot, and only then the tables
are dropped (a failure keeps them for the next start).
"""

from __future__ import annotations

import json
import logging
from typing import Callable

from pony import orm

from hausbox.devices import snapshot

log = logging.getLogger("hausbox.device-manager")

TABLES = ("device_state_handover", "datum_state_handover")


def read(db: orm.Database) -> dict[str, snapshot.DeviceState] | None:
    """The handed-over states, or None when there is nothing to hand over (inside a db_session)."""
    names = ", ".join(f"'{name}'" for name in TABLES)
    present = db.execute(f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({names})").fetchall()
    if len(present) != len(TABLES):
        return None
    states: dict[str, snapshot.DeviceState] = {}
    for device_id, status, last_seen in db.execute("SELECT device_id, status, last_seen FROM device_state_handover"):
        states[device_id] = snapshot.DeviceState(status, last_seen)
    for device_id, key, value, last_updated, last_changed in db.execute(
        "SELECT device_id, key, value, last_updated, last_changed FROM datum_state_handover"
    ):
        try:
            decoded = json.loads(value) if value is not None else None
        except ValueError:
            decoded = None
        state = states.setdefault(device_id, snapshot.DeviceState("unknown"))
        state.data[key] = (decoded, last_updated, last_changed)
    return states


def finish(db: orm.Database, write_snapshot: Callable[[], None], snapshot_name: str) -> None:
    """Write the handed-over values into the snapshot; only then drop the handover tables."""
    try:
        write_snapshot()
        with orm.db_session:
            for table in TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
    except Exception:
        log.exception("could not move the device values of the database into the snapshot (tried again at the next start)")
        return
    log.info("device values moved from the database into %s", snapshot_name)
