"""The zone tree: a root zone always exists; no cycles; only empty leaves are deleted.

Zones are few and read on every aggregation, so the tree lives in memory; writes go through to
the database first.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from pony import orm

from hausbox.core.bus import EventBus
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.errors import BadRequest, NotFound
from hausbox.core.jsonenc import dumps

ROOT_ID = "00000000-0000-0000-0000-000000000001"
ROOT_NAME = "Home"
NAME_MAX, DESCRIPTION_MAX = 100, 500


@dataclass
class Zone:
    id: str
    name: str
    parent_id: str | None
    icon: str | None
    description: str | None
    display_order: int
    created_at: int
    updated_at: int
    children: list["Zone"] = field(default_factory=list)

    def to_json(self, depth: int = 0) -> dict[str, Any]:
        body = {
            "id": self.id,
            "name": self.name,
            "parentId": self.parent_id,
            "icon": self.icon,
            "description": self.description,
            "displayOrder": self.display_order,
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
        }
        if depth > 0:
            body["children"] = [child.to_json(depth - 1) for child in self.children]
        elif depth == 0:
            body["children"] = []
        return body


def _sort_key(zone: Zone) -> tuple[int, str]:
    return zone.display_order, zone.name.lower()


class ZoneTree:
    def __init__(self, db: orm.Database, bus: EventBus):
        self._db = db
        self._bus = bus
        self._zones: dict[str, Zone] = {}
        # Asked before deleting a zone: does anything (equipments) still live in it?
        self.occupied: Callable[[str], bool] = lambda _zone_id: False
        self._tree_bytes: bytes | None = None
        self._load()

    def _load(self) -> None:
        stamp = now_ms()
        with orm.db_session:
            if self._db.Zone.get(id=ROOT_ID) is None:
                self._db.Zone(id=ROOT_ID, name=ROOT_NAME, icon="home", parent_id=None, display_order=0, created_at=stamp, updated_at=stamp)
            for row in self._db.Zone.select():
                if row.id != ROOT_ID and row.parent_id is None:
                    row.parent_id = ROOT_ID  # every zone hangs under the root
                self._zones[row.id] = Zone(row.id, row.name, row.parent_id, row.icon, row.description, row.display_order, row.created_at, row.updated_at)
        self._relink()

    def _relink(self) -> None:
        """Rebuild parent/child links after any change (every write path ends here)."""
        self._tree_bytes = None
        for zone in self._zones.values():
            zone.children = []
        for zone in self._zones.values():
            if zone.parent_id in self._zones:
                self._zones[zone.parent_id].children.append(zone)
        for zone in self._zones.values():
            zone.children.sort(key=_sort_key)

    # ---- reads -------------------------------------------------------------------------------
    def exists(self, zone_id: str) -> bool:
        return zone_id in self._zones

    def get(self, zone_id: str) -> Zone:
        zone = self._zones.get(zone_id)
        if zone is None:
            raise NotFound(f"Zone not found: {zone_id}")
        return zone

    def root(self) -> Zone:
        return self._zones[ROOT_ID]

    def all(self) -> list[Zone]:
        return list(self._zones.values())

    def ancestors(self, zone_id: str) -> Iterator[Zone]:
        """The zone itself, then its parent, up to the root."""
        zone = self._zones.get(zone_id)
        while zone is not None:
            yield zone
            zone = self._zones.get(zone.parent_id) if zone.parent_id else None

    def descendants(self, zone_id: str) -> list[Zone]:
        """The zone itself and every zone below it."""
        found, stack = [], [self.get(zone_id)]
        while stack:
            zone = stack.pop()
            found.append(zone)
            stack.extend(reversed(zone.children))
        return found

    def tree_json(self) -> list[dict[str, Any]]:
        return [self.root().to_json(depth=1000)]

    def tree_bytes(self) -> bytes:
        """The encoded tree, kept until the next change."""
        if self._tree_bytes is None:
            self._tree_bytes = dumps(self.tree_json())
        return self._tree_bytes

    # ---- writes ------------------------------------------------------------------------------
    def create(self, name: str, parent_id: str | None = None, icon: str | None = None, description: str | None = None, display_order: int | None = None) -> dict[str, Any]:
        parent = self.get(parent_id or ROOT_ID) if parent_id else self.root()
        stamp = now_ms()
        zone = Zone(
            str(uuid.uuid4()), name.strip(), parent.id, icon, description,
            display_order if display_order is not None else len(parent.children), stamp, stamp,
        )  # fmt: skip
        with orm.db_session:
            self._db.Zone(
                id=zone.id, name=zone.name, parent_id=zone.parent_id, icon=icon, description=description,
                display_order=zone.display_order, created_at=stamp, updated_at=stamp,
            )  # fmt: skip
        self._zones[zone.id] = zone
        self._relink()
        body = zone.to_json()
        self._bus.emit("zone.created", zone=body)
        return body

    def update(self, zone_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        zone = self.get(zone_id)
        if "parentId" in fields:
            parent_id = fields["parentId"] or ROOT_ID
            if zone_id == ROOT_ID and fields["parentId"]:
                raise BadRequest("The root zone cannot have a parent")
            if zone_id != ROOT_ID:
                self.get(parent_id)
                if any(a.id == zone_id for a in self.ancestors(parent_id)):
                    raise BadRequest("A zone cannot be moved under itself or one of its descendants")
        changes = {
            "name": fields["name"].strip() if "name" in fields else zone.name,
            "parent_id": (fields["parentId"] or ROOT_ID) if "parentId" in fields and zone_id != ROOT_ID else zone.parent_id,
            "icon": fields.get("icon", zone.icon),
            "description": fields.get("description", zone.description),
            "display_order": fields["displayOrder"] if fields.get("displayOrder") is not None else zone.display_order,
            "updated_at": now_ms(),
        }
        with orm.db_session:
            self._db.Zone[zone_id].set(**changes)
        for name, value in changes.items():
            setattr(zone, name, value)
        self._relink()
        body = zone.to_json()
        self._bus.emit("zone.updated", zone=body)
        return body

    def delete(self, zone_id: str) -> None:
        zone = self.get(zone_id)
        if zone_id == ROOT_ID:
            raise BadRequest("The root zone cannot be deleted")
        if zone.children:
            raise BadRequest("Zone has child zones: move or delete them first")
        if self.occupied(zone_id):
            raise BadRequest("Zone has equipments: move or delete them first")
        with orm.db_session:
            self._db.Zone[zone_id].delete()
        del self._zones[zone_id]
        self._relink()
        self._bus.emit("zone.removed", zoneId=zone_id, zoneName=zone.name)

    def reorder(self, parent_id: str, ordered_ids: list[str]) -> None:
        parent = self.get(parent_id)
        siblings = {child.id for child in parent.children}
        strangers = [zone_id for zone_id in ordered_ids if zone_id not in siblings]
        if strangers:
            raise BadRequest(f"Not a child of {parent_id}: {', '.join(strangers)}")
        if len(set(ordered_ids)) != len(ordered_ids):
            raise BadRequest("orderedIds has duplicates")
        stamp = now_ms()
        with orm.db_session:
            for index, zone_id in enumerate(ordered_ids):
                self._db.Zone[zone_id].set(display_order=index, updated_at=stamp)
        for index, zone_id in enumerate(ordered_ids):
            self._zones[zone_id].display_order = index
        self._relink()
        for zone_id in ordered_ids:
            self._bus.emit("zone.updated", zone=self._zones[zone_id].to_json())
