"""User accounts: creation, profile, roles, enabling, and the last-admin guard.

The directory keeps every user in memory (a house has a handful): checking a credential and
reading a profile (``GET /me``, ``GET /users``) never touch the database; every write updates the
view from the row it committed.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from gevent.lock import RLock
from pony import orm

from hausbox.auth import passwords
from hausbox.core.bus import EventBus
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.core.logs import by_actor, get_logger

ROLES = ("admin", "standard")
DEFAULT_PREFERENCES = {"language": "en"}
USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")

log = get_logger("auth")


@dataclass(frozen=True)
class UserInfo:
    id: str
    username: str
    role: str
    enabled: bool


def user_json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "username": row.username,
        "displayName": row.display_name,
        "role": row.role,
        "enabled": row.enabled,
        "preferences": {**DEFAULT_PREFERENCES, **(row.preferences or {})},
        "lastLoginAt": iso_utc(row.last_login_at),
        "createdAt": iso_utc(row.created_at),
        "updatedAt": iso_utc(row.updated_at),
    }


def changed_fields(display_name: str | None, role: str | None, enabled: bool | None) -> list[str]:
    """What an update changes, for its log line (the display name itself is not repeated)."""
    fields = ["displayName"] if display_name is not None else []
    if role is not None:
        fields.append(f"role {role}")
    if enabled is not None:
        fields.append("enabled" if enabled else "disabled")
    return fields


def log_change(username: str, user_id: str, what: str, by: str | None) -> None:
    log.info("user %s (%s) %s%s", username, user_id, what, by_actor(by))


def _copy(entry: dict[str, Any]) -> dict[str, Any]:
    """What a caller may change without changing the view."""
    return {**entry, "preferences": dict(entry["preferences"])}


class UserDirectory:
    def __init__(self, db: orm.Database, bus: EventBus, bcrypt_rounds: int, on_revoked: Callable[[str], None]):
        self._db = db
        self._bus = bus
        self._rounds = bcrypt_rounds
        self._on_revoked = on_revoked  # called with a user id whose credentials must stop working
        # Serialises the checks-then-writes that guard invariants (single setup, last admin).
        self.lock = RLock()
        self._cache: dict[str, UserInfo] = {}
        self._json: dict[str, dict[str, Any]] = {}  # id -> user_json
        with orm.db_session:
            for row in db.User.select():
                self._remember(row)

    def _remember(self, row: Any) -> dict[str, Any]:
        """Take a committed row into the in-memory view; its JSON."""
        self._cache[row.id] = UserInfo(row.id, row.username, row.role, bool(row.enabled))
        self._json[row.id] = user_json(row)
        return _copy(self._json[row.id])

    # ---- reads -------------------------------------------------------------------------------
    def has_users(self) -> bool:
        return bool(self._cache)

    def info(self, user_id: str) -> UserInfo | None:
        return self._cache.get(user_id)

    def get(self, user_id: str) -> dict[str, Any]:
        entry = self._json.get(user_id)
        if entry is None:
            raise NotFound("User not found")
        return _copy(entry)

    def list(self) -> list[dict[str, Any]]:
        return [_copy(entry) for entry in sorted(self._json.values(), key=lambda entry: entry["username"].lower())]

    def find_for_login(self, username: str) -> tuple[str, str, bool] | None:
        """``(user id, password hash, enabled)`` for a username, case-insensitively."""
        with orm.db_session:
            row = self._db.User.get(username_key=username.strip().lower())
            return (row.id, row.password_hash, bool(row.enabled)) if row else None

    def password_hash(self, user_id: str) -> str:
        with orm.db_session:
            return self._db.User[user_id].password_hash

    # ---- writes ------------------------------------------------------------------------------
    def create(
        self, username: str, password: str, display_name: str, role: str, preferences: dict | None = None, by: str | None = None
    ) -> dict[str, Any]:
        username = username.strip()
        if not USERNAME.match(username):
            raise BadRequest("username must be 1-64 letters, digits or . _ @ - and start with a letter or digit")
        if role not in ROLES:
            raise BadRequest("role must be one of admin, standard")
        passwords.check_policy(password)
        hashed = passwords.hash_password(password, self._rounds)
        stamp = now_ms()
        with self.lock:
            with orm.db_session:
                if self._db.User.get(username_key=username.lower()):
                    raise Conflict("Username already exists")
                row = self._db.User(
                    id=str(uuid.uuid4()),
                    username=username,
                    username_key=username.lower(),
                    display_name=display_name.strip() or username,
                    password_hash=hashed,
                    role=role,
                    enabled=True,
                    preferences=preferences or {},
                    created_at=stamp,
                    updated_at=stamp,
                )
                orm.commit()
                log_change(username, row.id, f"created with role {role}", by)
                return self._remember(row)

    def update(
        self, user_id: str, display_name: str | None = None, role: str | None = None, enabled: bool | None = None, by: str | None = None
    ) -> dict[str, Any]:
        if role is not None and role not in ROLES:
            raise BadRequest("role must be one of admin, standard")
        with self.lock:
            with orm.db_session:
                row = self._db.User.get(id=user_id)
                if row is None:
                    raise NotFound("User not found")
                loses_admin = row.role == "admin" and row.enabled and (role == "standard" or enabled is False)
                if loses_admin and self._enabled_admins() <= 1:
                    raise BadRequest("Cannot remove the last admin: it cannot be demoted or disabled")
                revoke = enabled is False and row.enabled
                if display_name is not None:
                    row.display_name = display_name.strip() or row.username
                if role is not None:
                    row.role = role
                if enabled is not None:
                    row.enabled = enabled
                row.updated_at = now_ms()
                orm.commit()
                result = self._remember(row)
        fields = changed_fields(display_name, role, enabled)
        if fields:
            log_change(result["username"], user_id, "updated: " + ", ".join(fields), by)
        if revoke:
            self._on_revoked(user_id)
        return result

    def delete(self, user_id: str, acting_user_id: str, by: str | None = None) -> None:
        if user_id == acting_user_id:
            raise BadRequest("Cannot delete your own account")
        with self.lock:
            with orm.db_session:
                row = self._db.User.get(id=user_id)
                if row is None:
                    raise NotFound("User not found")
                if row.role == "admin" and row.enabled and self._enabled_admins() <= 1:
                    raise BadRequest("Cannot delete the last admin")
                username = row.username
                row.delete()
            self._cache.pop(user_id, None)
            self._json.pop(user_id, None)
        log_change(username, user_id, "deleted", by)
        self._on_revoked(user_id)

    def set_display_name(self, user_id: str, display_name: str, by: str | None = None) -> dict[str, Any]:
        return self._set_column(user_id, "display_name", display_name.strip() or self.get(user_id)["username"], "displayName", by)

    def set_preferences(self, user_id: str, preferences: dict[str, Any], by: str | None = None) -> dict[str, Any]:
        return self._set_column(user_id, "preferences", preferences, "preferences", by)

    def _set_column(self, user_id: str, column: str, value: Any, field: str, by: str | None) -> dict[str, Any]:
        with orm.db_session:
            row = self._db.User[user_id]
            setattr(row, column, value)
            row.updated_at = now_ms()
            orm.commit()
            log_change(row.username, user_id, f"updated: {field}", by)
            return self._remember(row)

    def set_password(self, user_id: str, new_password: str) -> None:
        passwords.check_policy(new_password, "newPassword")
        hashed = passwords.hash_password(new_password, self._rounds)
        with orm.db_session:
            row = self._db.User[user_id]
            row.password_hash = hashed
            row.updated_at = now_ms()
            orm.commit()
            self._remember(row)

    def record_login(self, user_id: str) -> None:
        with orm.db_session:
            row = self._db.User[user_id]
            row.last_login_at = now_ms()
            orm.commit()
            self._remember(row)

    def _enabled_admins(self) -> int:
        return self._db.User.select(lambda u: u.role == "admin" and u.enabled).count()
