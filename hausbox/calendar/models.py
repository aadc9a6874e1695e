"""Database entities of the calendar domain (tables from migration 0006)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class CalendarProfile(db.Entity):
        _table_ = "calendar_profiles"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        built_in = orm.Required(bool, default=False)
        created_at = orm.Required(int, size=64)

    class CalendarSlot(db.Entity):
        _table_ = "calendar_slots"
        id = orm.PrimaryKey(str)
        profile_id = orm.Required(str)
        days = orm.Required(orm.Json)
        time = orm.Required(str)
        mode_actions = orm.Required(orm.Json)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
