"""Database entities of the mode domain (tables from migration 0005)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class Mode(db.Entity):
        _table_ = "modes"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        icon = orm.Optional(str, nullable=True)
        description = orm.Optional(str, nullable=True)
        active = orm.Required(bool, default=False)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class ZoneModeImpact(db.Entity):
        _table_ = "zone_mode_impacts"
        id = orm.PrimaryKey(str)
        mode_id = orm.Required(str)
        zone_id = orm.Required(str)
        actions = orm.Required(orm.Json)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
        orm.composite_key(mode_id, zone_id)
