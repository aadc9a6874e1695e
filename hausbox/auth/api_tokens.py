"""Long-lived API tokens: ``hbx_`` + 64 hex characters, shown once, stored as sha256 only."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from pony import orm

from hausbox.auth.sessions import sha256_hex
from hausbox.core.clock import iso_utc, now_ms, parse_iso
from hausbox.core.errors import BadRequest, NotFound
from hausbox.core.logs import by_actor, get_logger

PREFIX = "hbx_"
LAST_USED_RESOLUTION_MS = 60_000  # spare the SD card: record use at most once a minute

log = get_logger("auth")


def token_json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "expiresAt": iso_utc(row.expires_at),
        "lastUsedAt": iso_utc(row.last_used_at),
        "createdAt": iso_utc(row.created_at),
    }


class ApiTokens:
    def __init__(self, db: orm.Database):
        self._db = db
        with orm.db_session:
            # token hash -> [token id, user id, expiry ms or None, last used ms or None]
            self._by_hash: dict[str, list[Any]] = {
                row.token_hash: [row.id, row.user_id, row.expires_at, row.last_used_at] for row in db.ApiToken.select()
            }

    def create(self, user_id: str, name: str, expires_at: str | None, by: str | None = None) -> dict[str, Any]:
        expiry = None
        if expires_at is not None:
            try:
                expiry = parse_iso(expires_at)
            except ValueError:
                raise BadRequest("expiresAt must be an ISO 8601 date-time")
            if expiry <= now_ms():
                raise BadRequest("expiresAt must be in the future")
        token = PREFIX + secrets.token_hex(32)
        hashed = sha256_hex(token)
        with orm.db_session:
            row = self._db.ApiToken(
                id=str(uuid.uuid4()), user_id=user_id, name=name.strip(), token_hash=hashed, expires_at=expiry, created_at=now_ms()
            )
            orm.commit()
            result = {**token_json(row), "token": token}
        self._by_hash[hashed] = [row.id, user_id, expiry, None]
        log.info("API token %s (%s) of user %s created%s", row.id, result["name"], user_id, by_actor(by))
        return result

    def list(self, user_id: str) -> list[dict[str, Any]]:
        with orm.db_session:
            rows = self._db.ApiToken.select(lambda t: t.user_id == user_id).order_by(lambda t: t.created_at)
            return [token_json(row) for row in rows]

    def delete(self, user_id: str, token_id: str, by: str | None = None) -> None:
        with orm.db_session:
            row = self._db.ApiToken.get(id=token_id)
            if row is None or row.user_id != user_id:
                raise NotFound("API token not found")
            hashed = row.token_hash
            row.delete()
        self._by_hash.pop(hashed, None)
        log.info("API token %s of user %s deleted%s", token_id, user_id, by_actor(by))

    def forget_user(self, user_id: str) -> None:
        """Drop the cached tokens of a deleted user (the database rows cascade away)."""
        kept = {h: v for h, v in self._by_hash.items() if v[1] != user_id}
        dropped, self._by_hash = len(self._by_hash) - len(kept), kept
        if dropped:
            log.info("%d API token(s) of deleted user %s revoked", dropped, user_id)

    def resolve(self, token: str) -> tuple[str, str] | None:
        """``(token id, user id)`` for a valid, unexpired token; records its use."""
        entry = self._by_hash.get(sha256_hex(token))
        if entry is None:
            return None
        token_id, user_id, expiry, last_used = entry
        now = now_ms()
        if expiry is not None and expiry <= now:
            return None
        if last_used is None or now - last_used > LAST_USED_RESOLUTION_MS:
            entry[3] = now
            with orm.db_session:
                row = self._db.ApiToken.get(id=token_id)
                if row is not None:
                    row.last_used_at = now
        return token_id, user_id

    def is_live(self, token_id: str) -> bool:
        return any(entry[0] == token_id and (entry[2] is None or entry[2] > now_ms()) for entry in self._by_hash.values())
