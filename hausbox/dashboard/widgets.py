"""Dashboard widgets: a tile for one equipment, or for one family of equipments in a zone.

A widget refers to an equipment or a zone that must exist when it is created (a reference to
nothing is a bad request, not a missing resource). It goes away with what it shows: the table's
foreign keys cascade, and the service also drops the rows on ``equipment.removed``/``zone.removed``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from pony import orm

from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, NotFound
from hausbox.equipments.manager import EquipmentManager
from hausbox.zones.tree import ZoneTree

TYPES = ("equipment", "zone")
FAMILIES = ("lights", "shutters", "heating", "sensors")
LABEL_MAX = 200
ICON_MAX = 100


class DashboardWidgets:
    def __init__(self, db: orm.Database, bus: EventBus, clock: Clock, zones: ZoneTree, equipments: EquipmentManager):
        self._db = db
        self._clock = clock
        self._zones = zones
        self._equipments = equipments
        # cascades of a user's deletion (API only): done before it is acknowledged
        bus.on("equipment.removed", lambda e: self._drop_referring(equipment_id=e["equipmentId"]))
        bus.on("zone.removed", lambda e: self._drop_referring(zone_id=e["zoneId"]))

    # ---- reads -------------------------------------------------------------------------------
    def list(self) -> list[dict[str, Any]]:
        """Every widget, in display order."""
        with orm.db_session:
            rows = self._db.DashboardWidget.select().order_by(lambda w: (w.display_order, w.created_at, w.id))
            return [_json(row) for row in rows]

    def get(self, widget_id: str) -> dict[str, Any]:
        with orm.db_session:
            return _json(self._require(widget_id))

    def _require(self, widget_id: str) -> Any:
        row = self._db.DashboardWidget.get(id=widget_id)
        if row is None:
            raise NotFound(f"Widget not found: {widget_id}")
        return row

    # ---- writes ------------------------------------------------------------------------------
    def create(self, fields: dict[str, Any]) -> dict[str, Any]:
        widget_type = fields["type"]
        equipment_id = zone_id = family = None
        if widget_type == "equipment":
            equipment_id = fields.get("equipmentId")
            if not equipment_id:
                raise BadRequest("equipmentId is required for an equipment widget")
            if self._equipments.get(equipment_id) is None:
                raise BadRequest(f"Equipment not found: {equipment_id}")
        else:
            zone_id, family = fields.get("zoneId"), fields.get("family")
            if not zone_id:
                raise BadRequest("zoneId is required for a zone widget")
            if not family:
                raise BadRequest(f"family is required for a zone widget ({', '.join(FAMILIES)})")
            if not self._zones.exists(zone_id):
                raise BadRequest(f"Zone not found: {zone_id}")
        with orm.db_session:
            last = orm.max(w.display_order for w in self._db.DashboardWidget)
            row = self._db.DashboardWidget(
                id=str(uuid.uuid4()), type=widget_type, label=fields.get("label"), icon=fields.get("icon"),
                equipment_id=equipment_id, zone_id=zone_id, family=family,
                display_order=0 if last is None else last + 1, config=_dump(fields.get("config")),
                created_at=self._clock.now_ms(),
            )  # fmt: skip
            return _json(row)

    def update(self, widget_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change the label, icon or config given (null clears); no field at all changes nothing."""
        with orm.db_session:
            row = self._require(widget_id)
            changes: dict[str, Any] = {}
            for name in ("label", "icon"):
                if name in fields:
                    changes[name] = fields[name]
            if "config" in fields:
                changes["config"] = _dump(fields["config"])
            if changes:
                row.set(**changes)
            return _json(row)

    def delete(self, widget_id: str) -> None:
        with orm.db_session:
            self._require(widget_id).delete()

    def reorder(self, order: list[str]) -> None:
        """``order`` must list every widget id exactly once."""
        with orm.db_session:
            rows = {row.id: row for row in self._db.DashboardWidget.select()}
            if len(order) != len(set(order)) or set(order) != set(rows):
                raise BadRequest("order must list every widget id exactly once")
            for index, widget_id in enumerate(order):
                if rows[widget_id].display_order != index:
                    rows[widget_id].display_order = index

    def _drop_referring(self, equipment_id: str | None = None, zone_id: str | None = None) -> None:
        with orm.db_session:
            if equipment_id is not None:
                orm.delete(w for w in self._db.DashboardWidget if w.equipment_id == equipment_id)
            if zone_id is not None:
                orm.delete(w for w in self._db.DashboardWidget if w.zone_id == zone_id)


def _dump(config: Any) -> str | None:
    return None if config is None else json.dumps(config, separators=(",", ":"), ensure_ascii=False)


def _json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "type": row.type,
        "equipmentId": row.equipment_id,
        "zoneId": row.zone_id,
        "family": row.family,
        "label": row.label,
        "icon": row.icon,
        "config": json.loads(row.config) if row.config is not None else None,
        "displayOrder": row.display_order,
        "createdAt": iso_utc(row.created_at),
    }
