"""Database entities of the equipment domain (tables from migrations 0003 and 0008)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class Equipment(db.Entity):
        _table_ = "equipments"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        type = orm.Required(str)
        zone_id = orm.Required(str)
        icon = orm.Optional(str, nullable=True)
        description = orm.Optional(str, nullable=True)
        enabled = orm.Required(bool, default=True)
        separate_supply = orm.Required(bool, default=False)
        require_confirmation = orm.Required(bool, default=False)
        timed_command = orm.Optional(orm.Json, nullable=True)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class DataBinding(db.Entity):
        _table_ = "data_bindings"
        id = orm.PrimaryKey(str)
        equipment_id = orm.Required(str)
        device_data_id = orm.Required(str)
        alias = orm.Required(str)
        historize = orm.Optional(int)
        orm.composite_key(equipment_id, alias)

    class OrderBinding(db.Entity):
        _table_ = "order_bindings"
        id = orm.PrimaryKey(str)
        equipment_id = orm.Required(str)
        device_order_id = orm.Required(str)
        alias = orm.Required(str)
        category_override = orm.Optional(str, nullable=True)
        orm.composite_key(equipment_id, alias)

    class TimedAction(db.Entity):
        """An armed timed action (migration 0008); see equipments/timed_actions.py."""

        _table_ = "timed_actions"
        equipment_id = orm.PrimaryKey(str)
        alias = orm.Required(str)
        value = orm.Optional(str, nullable=True)
        revert_value = orm.Optional(str, nullable=True)
        duration_ms = orm.Required(int, size=64)
        armed_at = orm.Required(int, size=64)
        armed_by = orm.Optional(str, nullable=True)
        expires_at = orm.Required(int, size=64)
