"""Database entities of the zone domain (table from migration 0003)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class Zone(db.Entity):
        _table_ = "zones"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        parent_id = orm.Optional(str, nullable=True)
        icon = orm.Optional(str, nullable=True)
        description = orm.Optional(str, nullable=True)
        display_order = orm.Required(int, default=0)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
