"""Database entities of the auth domain (tables from migrations 0001, 0002, 0004 and 0016)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class User(db.Entity):
        _table_ = "users"
        id = orm.PrimaryKey(str)
        username = orm.Required(str)
        username_key = orm.Required(str, unique=True)
        display_name = orm.Required(str)
        password_hash = orm.Required(str)
        role = orm.Required(str, default="standard")
        enabled = orm.Required(bool, default=True)
        preferences = orm.Optional(orm.Json, default={})
        last_login_at = orm.Optional(int, size=64)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)

    class Session(db.Entity):
        _table_ = "sessions"
        id = orm.PrimaryKey(str)
        user_id = orm.Required(str)
        token_hash = orm.Required(str, unique=True)
        expires_at = orm.Required(int, size=64)
        created_at = orm.Required(int, size=64)
        refreshed_at = orm.Required(int, size=64)

    class RefreshHistory(db.Entity):
        _table_ = "refresh_history"
        token_hash = orm.PrimaryKey(str)
        session_id = orm.Required(str)

    class ApiToken(db.Entity):
        _table_ = "api_tokens"
        id = orm.PrimaryKey(str)
        user_id = orm.Required(str)
        name = orm.Required(str)
        token_hash = orm.Required(str, unique=True)
        expires_at = orm.Optional(int, size=64)
        last_used_at = orm.Optional(int, size=64)
        created_at = orm.Required(int, size=64)

    class UserMfa(db.Entity):
        _table_ = "user_mfa"
        user_id = orm.PrimaryKey(str)
        secret = orm.Optional(str, nullable=True)
        pending_secret = orm.Optional(str, nullable=True)
        last_step = orm.Optional(int, size=64)
        enabled_at = orm.Optional(int, size=64)
        updated_at = orm.Required(int, size=64)

    class MfaBackupCode(db.Entity):
        _table_ = "mfa_backup_codes"
        id = orm.PrimaryKey(str)
        user_id = orm.Required(str)
        code_hash = orm.Required(str)
        used_at = orm.Optional(int, size=64)
        created_at = orm.Required(int, size=64)

    class MfaTrustedDevice(db.Entity):
        _table_ = "mfa_trusted_devices"
        id = orm.PrimaryKey(str)
        user_id = orm.Required(str)
        name = orm.Required(str)
        token_hash = orm.Required(str, unique=True)
        expires_at = orm.Required(int, size=64)
        last_used_at = orm.Optional(int, size=64)
        created_at = orm.Required(int, size=64)
