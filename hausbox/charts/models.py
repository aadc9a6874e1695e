"""Database entities of saved charts (table from migration 0009)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class ChartConfig(db.Entity):
        _table_ = "chart_configs"
        id = orm.PrimaryKey(str)
        name = orm.Required(str)
        config = orm.Required(str)  # JSON text
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
