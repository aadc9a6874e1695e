"""Login sessions: short-lived access JWTs and rotating refresh tokens.

A session is one row per login. Its id travels in every access token as ``sid``, so ending the
session (logout, password change, disabling the user) ends its access tokens at once, not 15
minutes later. Refresh rotates the token; presenting a token that was already rotated away means it
was copied, and ends the whole session.
"""

from __future__ import annotations

import hashlib
import secrets
import sys
import uuid
from typing import Any

from pony import orm

from hausbox.core.clock import now_ms
from hausbox.core.errors import Unauthorized


def _import_jwt() -> Any:
    """PyJWT, without the RSA and EC code it loads from cryptography when that package is installed
    (web push needs it): ~8 MB of memory at every start for algorithms we never accept (HS256 only).
    A module set to None in sys.modules fails to import, which PyJWT takes as "not installed"."""
    if "cryptography" in sys.modules:  # already loaded by someone else: nothing to save
        import jwt

        return jwt
    sys.modules["cryptography"] = None  # type: ignore[assignment]
    try:
        import jwt

        return jwt
    finally:
        del sys.modules["cryptography"]


jwt = _import_jwt()
ACCESS_TTL_DEFAULT_S = 15 * 60
REFRESH_TTL_DEFAULT_S = 30 * 24 * 3600
ALGORITHM = "HS256"
VERIFIED_MAX = 1024  # access tokens whose signature was checked, kept for their next requests


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SessionStore:
    def __init__(self, db: orm.Database, signing_key: str, settings: Any):
        self._db = db
        self._key = signing_key
        self._settings = settings
        now = now_ms()
        with orm.db_session:
            # sid -> (user id, expiry ms); the in-memory truth for access-token checks
            self._live: dict[str, tuple[str, int]] = {
                row.id: (row.user_id, row.expires_at) for row in db.Session.select() if row.expires_at > now
            }
        # token -> (user id, session id, expiry ms): a token's signature and claims never change, so
        # they are checked once (PyJWT takes ~0.1 ms, more than a cached GET); whether its session
        # still stands is asked on every request.
        self._verified: dict[str, tuple[str, str, int]] = {}

    # Lifetimes are settings so an admin can tune them; the spec's values are the defaults.
    def access_ttl_s(self) -> int:
        return _positive_int(self._settings.get("auth.accessTokenTtlSeconds"), ACCESS_TTL_DEFAULT_S)

    def refresh_ttl_s(self) -> int:
        return _positive_int(self._settings.get("auth.refreshTokenTtlSeconds"), REFRESH_TTL_DEFAULT_S)

    def start(self, user_id: str, role: str) -> dict[str, Any]:
        """Open a session for a user who just proved who they are; return the token pair."""
        refresh = secrets.token_hex(32)
        stamp = now_ms()
        expires = stamp + self.refresh_ttl_s() * 1000
        sid = str(uuid.uuid4())
        with orm.db_session:
            self._db.Session.select(lambda s: s.expires_at < stamp).delete(bulk=True)
            self._db.Session(
                id=sid, user_id=user_id, token_hash=sha256_hex(refresh), expires_at=expires, created_at=stamp, refreshed_at=stamp
            )
        self._live = {k: v for k, v in self._live.items() if v[1] > stamp}
        self._live[sid] = (user_id, expires)
        return self._pair(user_id, role, sid, refresh)

    def rotate(self, refresh_token: str) -> tuple[str, str, str]:
        """Replace a refresh token by a new one: ``(user id, session id, new refresh token)``."""
        presented = sha256_hex(refresh_token)
        stamp = now_ms()
        with orm.db_session:
            row = self._db.Session.get(token_hash=presented)
            if row is None:
                replayed = self._db.RefreshHistory.get(token_hash=presented)
                if replayed is not None:
                    # A token rotated away is presented again: it was copied. End that session.
                    self._live.pop(replayed.session_id, None)
                    self._db.Session.select(lambda s: s.id == replayed.session_id).delete(bulk=True)
                    orm.commit()  # before raising: the db_session rolls back on an exception
                raise Unauthorized("Invalid refresh token")
            if row.expires_at <= stamp:
                self._live.pop(row.id, None)
                row.delete()
                orm.commit()
                raise Unauthorized("Invalid refresh token")
            fresh = secrets.token_hex(32)
            self._db.RefreshHistory(token_hash=row.token_hash, session_id=row.id)
            row.token_hash = sha256_hex(fresh)
            row.refreshed_at = stamp
            row.expires_at = stamp + self.refresh_ttl_s() * 1000
            self._live[row.id] = (row.user_id, row.expires_at)
            return row.user_id, row.id, fresh

    def end_by_refresh_token(self, refresh_token: str) -> str | None:
        """End the session of ``refresh_token``; the id of its user (None: no such session)."""
        with orm.db_session:
            row = self._db.Session.get(token_hash=sha256_hex(refresh_token))
            if row is None:
                return None
            self._live.pop(row.id, None)
            user_id = row.user_id
            row.delete()
            return user_id

    def end_user_sessions(self, user_id: str, keep: str | None = None) -> None:
        with orm.db_session:
            self._db.Session.select(lambda s: s.user_id == user_id and s.id != keep).delete(bulk=True)
        self._live = {sid: v for sid, v in self._live.items() if v[0] != user_id or sid == keep}

    def pair_for(self, user_id: str, role: str, sid: str, refresh: str) -> dict[str, Any]:
        return self._pair(user_id, role, sid, refresh)

    def _pair(self, user_id: str, role: str, sid: str, refresh: str) -> dict[str, Any]:
        ttl = self.access_ttl_s()
        stamp = now_ms()
        issued = stamp // 1000
        expires = -(-(stamp + ttl * 1000) // 1000)  # rounded up: the token lives at least ttl seconds
        access = jwt.encode(
            {"sub": user_id, "role": role, "sid": sid, "iat": issued, "exp": expires, "typ": "access"},
            self._key,
            algorithm=ALGORITHM,
        )
        return {"accessToken": access, "refreshToken": refresh, "expiresIn": ttl}

    def verify_access(self, token: str) -> tuple[str, str]:
        """``(user id, session id)`` of a valid access token; Unauthorized otherwise."""
        verified = self._verified.get(token)
        if verified is None:
            verified = self._verify_signature(token)
            if len(self._verified) >= VERIFIED_MAX:
                del self._verified[next(iter(self._verified))]  # the oldest
            self._verified[token] = verified
        user_id, sid, expires_ms = verified
        if expires_ms <= now_ms():
            self._verified.pop(token, None)
            raise Unauthorized("Invalid or expired token")
        if not self.is_live(sid, user_id):
            raise Unauthorized("Invalid or expired token")
        return user_id, sid

    def _verify_signature(self, token: str) -> tuple[str, str, int]:
        try:
            claims = jwt.decode(token, self._key, algorithms=[ALGORITHM], options={"require": ["exp", "sub", "sid"]})
        except jwt.PyJWTError:
            raise Unauthorized("Invalid or expired token")
        if claims.get("typ") != "access" or not isinstance(claims["sub"], str) or not isinstance(claims["sid"], str):
            raise Unauthorized("Invalid or expired token")
        return claims["sub"], claims["sid"], int(claims["exp"]) * 1000

    def is_live(self, sid: str, user_id: str) -> bool:
        live = self._live.get(sid)
        return live is not None and live[0] == user_id and live[1] > now_ms()


def _positive_int(value: Any, default: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if number > 0 else default
