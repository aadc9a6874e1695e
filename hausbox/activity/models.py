"""Database entities of the activity feed (table from migration 0009)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class ActivityItem(db.Entity):
        _table_ = "activity_items"
        seq = orm.PrimaryKey(int, auto=True)
        id = orm.Required(str, unique=True)
        timestamp = orm.Required(int, size=64)
        category = orm.Required(str)
        zone_id = orm.Optional(str, nullable=True)
        template = orm.Required(str)
        params = orm.Required(orm.Json)
        source = orm.Optional(orm.Json, nullable=True)
