"""Database entities of the recipe domain (tables from migration 0007)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class RecipeInstance(db.Entity):
        _table_ = "recipe_instances"
        id = orm.PrimaryKey(str)
        recipe_id = orm.Required(str)
        params = orm.Required(str)  # JSON text
        enabled = orm.Required(bool, default=True)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class RecipeState(db.Entity):
        _table_ = "recipe_state"
        instance_id = orm.Required(str)
        key = orm.Required(str)
        value = orm.Optional(str, nullable=True)  # JSON text
        orm.PrimaryKey(instance_id, key)

    class RecipeLog(db.Entity):
        _table_ = "recipe_log"
        id = orm.PrimaryKey(int, auto=True)
        instance_id = orm.Required(str)
        timestamp = orm.Required(int, size=64)
        message = orm.Required(str)
        level = orm.Required(str, default="info")
