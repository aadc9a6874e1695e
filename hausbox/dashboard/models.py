"""Database entities of the dashboard (table from migration 0009)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class DashboardWidget(db.Entity):
        _table_ = "dashboard_widgets"
        id = orm.PrimaryKey(str)
        type = orm.Required(str)
        label = orm.Optional(str, nullable=True)
        icon = orm.Optional(str, nullable=True)
        equipment_id = orm.Optional(str, nullable=True)
        zone_id = orm.Optional(str, nullable=True)
        family = orm.Optional(str, nullable=True)
        display_order = orm.Required(int, default=0)
        config = orm.Optional(str, nullable=True)  # JSON text
        created_at = orm.Required(int, size=64)
