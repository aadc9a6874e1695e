"""Instance identity: whether this deployment may act on the home with the database it found.

Two ids: the running deployment's, in ``<data dir>/instance.json`` (made at its first start,
never in a backup, never written by a restore), and the database's, in ``instance_identity``
(claimed by the deployment that created or took over the database, and carried by its backups).
When they differ, the database was restored from another box: running it as is would let two
boxes drive one house (the same broker client ids, recipes firing twice, notifications sent
twice). So the instance starts inert: the outbound gate stays closed (integrations, plugins,
recipes, publishers, notifications, version polling) until an administrator confirms the
takeover, or ``SERVICE_TAKEOVER=1`` is set; either takes full effect at the next start.

Shadow mode (``SERVICE_SHADOW_MODE=1``) is a safe copy of production: the gate is closed
whatever the ids say, the takeover stays pending and is never claimed, and no banner is shown.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pony import orm

from hausbox.core.secrets import write_private

log = logging.getLogger("hausbox.identity")

MARKER_FILE = "instance.json"
SHADOW = "shadow mode"
INERT = "inert instance (database restored from another instance: takeover pending)"


@dataclass
class Identity:
    instance_id: str  # this deployment's (the marker)
    database_instance_id: str  # the database's
    shadow: bool
    takeover_confirmed: bool = False  # confirmed while running: applies at the next start

    @property
    def mode(self) -> str:
        if self.shadow:
            return "shadow"
        return "inert" if self.inert else "normal"

    @property
    def inert(self) -> bool:
        return self.instance_id != self.database_instance_id

    @property
    def takeover_pending(self) -> bool:
        return self.shadow or (self.inert and not self.takeover_confirmed)

    def json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "takeoverPending": self.takeover_pending,
            # The banner asks an administrator to confirm; a shadow copy must never be taken over.
            "banner": self.inert and not self.shadow and not self.takeover_confirmed,
            "instanceId": self.instance_id,
            "databaseInstanceId": self.database_instance_id,
            "restartRequired": self.takeover_confirmed,
        }


def read_marker(data_dir: Path) -> str:
    """This deployment's id, made at its first start."""
    path = data_dir / MARKER_FILE
    try:
        instance_id = json.loads(path.read_text())["instanceId"]
        if isinstance(instance_id, str) and instance_id:
            return instance_id
        raise ValueError("empty instanceId")
    except FileNotFoundError:
        pass
    except (ValueError, KeyError, TypeError) as error:
        # A damaged marker is a new deployment: safer inert than driving a house twice.
        log.error("instance marker %s unreadable (%s): this deployment gets a new id", path, error)
    instance_id = str(uuid.uuid4())
    write_private(path, json.dumps({"instanceId": instance_id}))
    return instance_id


def resolve(data_dir: Path, db: orm.Database, now_ms: int, shadow: bool, takeover: bool) -> Identity:
    """Compare the two ids at start; claim the database when it has no owner or the takeover is set."""
    marker = read_marker(data_dir)
    with orm.db_session:
        rows = db.select("SELECT instance_id FROM instance_identity WHERE slot = 1")
        owner = rows[0] if rows else None
        if owner is None or (owner != marker and takeover and not shadow):
            if owner is not None:
                log.warning("SERVICE_TAKEOVER=1: this instance takes over the database of instance %s", owner)
            _claim(db, marker, now_ms)
            owner = marker
    identity = Identity(marker, owner, shadow)
    if identity.inert and not shadow:
        log.warning("database restored from instance %s, this is %s: inert until an administrator confirms the takeover", owner, marker)
    return identity


def confirm_takeover(identity: Identity, db: orm.Database, now_ms: int) -> None:
    """An administrator's confirmation: the database becomes this deployment's at the next start."""
    with orm.db_session:
        _claim(db, identity.instance_id, now_ms)
    identity.takeover_confirmed = True
    log.warning("takeover confirmed: instance %s takes over the database of %s at its next start", identity.instance_id, identity.database_instance_id)


def _claim(db: orm.Database, instance_id: str, now_ms: int) -> None:
    db.execute(
        "INSERT INTO instance_identity (slot, instance_id, claimed_at) VALUES (1, $instance_id, $now)"
        " ON CONFLICT (slot) DO UPDATE SET instance_id = excluded.instance_id, claimed_at = excluded.claimed_at",
        {"instance_id": instance_id, "now": now_ms},
    )
