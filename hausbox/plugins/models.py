"""Database entities of installed plugins and personal sources (tables from migration 0015)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class Plugin(db.Entity):
        _table_ = "plugins"
        id = orm.PrimaryKey(str)
        repo = orm.Required(str)
        version = orm.Required(str)
        type = orm.Required(str)
        source = orm.Required(str)
        manifest = orm.Required(str)  # JSON text
        archive_sha256 = orm.Required(str)
        pinned_sha256 = orm.Optional(str, nullable=True)
        enabled = orm.Required(bool)
        installed_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class PluginSource(db.Entity):
        _table_ = "plugin_sources"
        repo = orm.PrimaryKey(str)
        added_at = orm.Required(int, size=64)
