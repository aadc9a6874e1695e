"""Database entities of the button actions domain (table from migration 0010)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class ButtonActionBinding(db.Entity):
        _table_ = "button_action_bindings"
        id = orm.PrimaryKey(str)
        equipment_id = orm.Required(str)
        action_value = orm.Required(str)
        effect_type = orm.Required(str)
        config = orm.Required(orm.Json)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
