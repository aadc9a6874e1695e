"""The auth service: first-run setup, login (with its second factor), refresh, logout, and turning a
credential into a Principal."""

from __future__ import annotations

import logging
import secrets
from typing import Any, Callable

from pony import orm

from hausbox.auth import passwords
from hausbox.auth.api_tokens import PREFIX as API_TOKEN_PREFIX
from hausbox.auth.api_tokens import ApiTokens
from hausbox.auth.mfa import MfaService, normalized_code
from hausbox.auth.principal import Principal
from hausbox.auth.rate_limit import AttemptLimiter
from hausbox.auth.sessions import SessionStore
from hausbox.auth.users import UserDirectory
from hausbox.config import Config
from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.errors import BadRequest, Forbidden, NotFound, Unauthorized

log = logging.getLogger("hausbox.auth")


class AuthService:
    def __init__(self, db: orm.Database, bus: EventBus, settings: Any, signing_key: str, config: Config, clock: Clock,
                 add_secret: Callable[[str], None]):  # fmt: skip
        self._bus = bus
        self.users = UserDirectory(db, bus, config.bcrypt_rounds, on_revoked=self._revoke_user)
        self.sessions = SessionStore(db, signing_key, settings)
        self.tokens = ApiTokens(db)
        self.mfa = MfaService(db, clock, add_secret)
        # Guesses at a password or a code, per address and per account (login, password change).
        self.attempts = AttemptLimiter(config.login_rate_per_minute, 60)
        self._rounds = config.bcrypt_rounds
        self._dummy_hash: str | None = None

    def has_users(self) -> bool:
        return self.users.has_users()

    # ---- sign-in flows -----------------------------------------------------------------------
    def setup(self, username: str, password: str, display_name: str, language: str | None) -> dict[str, Any]:
        """Create the first administrator (first run only) and sign them in."""
        with self.users.lock:
            if self.users.has_users():
                raise Forbidden("Setup already completed")
            user = self.users.create(username, password, display_name, "admin", {"language": language or "en"}, by="first-run setup")
        return self._sign_in(user["id"])

    def login(self, username: str, password: str) -> dict[str, Any]:
        """A token pair for the right password of an enabled account, or a challenge when the account
        has MFA on (completed by ``verify_mfa``); the route counted the address."""
        self.attempts.count(account=username)
        found = self.users.find_for_login(username)
        if found is None:
            # Unknown usernames cost as much time as wrong passwords: no user enumeration by timing.
            if self._dummy_hash is None:
                self._dummy_hash = passwords.hash_password(secrets.token_hex(8), self._rounds)
            passwords.verify_password(password, self._dummy_hash)
            log.info("login refused: unknown user")
            raise Unauthorized("Invalid credentials")
        user_id, hashed, enabled = found
        if not passwords.verify_password(password, hashed):
            log.info("login refused: wrong password for user %s", user_id)
            raise Unauthorized("Invalid credentials")
        if not enabled:
            # The same answer as a wrong password: nobody learns a disabled account's password.
            log.info("login refused: user %s is disabled", user_id)
            raise Unauthorized("Invalid credentials")
        if self.mfa.enabled(user_id):
            return self.mfa.challenge(user_id, self.users.info(user_id).username)
        return self._sign_in(user_id)

    def verify_mfa(
        self, token: str, code: str | None = None, backup_code: str | None = None, device_token: str | None = None,
        trust_device: bool = False, device_name: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Complete a login challenge with one second factor: the token pair (and, asked for, a
        trusted-device token). A wrong answer is a 401; the fifth ends the challenge."""
        given = [value for value in (code, backup_code, device_token) if value is not None]
        if len(given) != 1:
            raise BadRequest("Exactly one of code, backupCode or trustedDeviceToken is required")
        if code is not None:
            code = normalized_code(code)  # a malformed code is a 400 that costs the challenge nothing
        peeked = self.mfa.peek_challenge(token)
        if peeked is not None:
            self.attempts.count(account=peeked.username)  # guesses at the code count against the account
        challenge = self.mfa.take_challenge(token)
        if challenge is None:
            raise Unauthorized("Invalid or expired challenge: sign in again")
        user_id = challenge.user_id
        if code is not None:
            right = self.mfa.check_code(user_id, code)
        elif backup_code is not None:
            right = self.mfa.use_backup_code(user_id, backup_code)
        else:
            right = self.mfa.check_device(user_id, device_token or "")
        if not right:
            log.info("MFA step refused: wrong answer for user %s", user_id)
            if self.mfa.failed(token, challenge):
                raise Unauthorized("Invalid code")
            raise Unauthorized("Too many wrong codes: sign in again")
        info = self.users.info(user_id)
        if info is None or not info.enabled:
            raise Unauthorized("Invalid or expired challenge: sign in again")
        result = self._sign_in(user_id)
        if trust_device and device_token is None:
            device = self.mfa.trust_device(user_id, (device_name or "").strip()[:100] or "Trusted device")
            result["trustedDeviceToken"] = device.pop("token")
            result["trustedDevice"] = device
        return result

    def _sign_in(self, user_id: str) -> dict[str, Any]:
        info = self.users.info(user_id)
        self.users.record_login(user_id)
        pair = self.sessions.start(user_id, info.role)
        return {**pair, "user": self.users.get(user_id)}

    def refresh(self, refresh_token: str) -> dict[str, Any]:
        user_id, sid, fresh = self.sessions.rotate(refresh_token)
        info = self.users.info(user_id)
        if info is None or not info.enabled:
            self.sessions.end_user_sessions(user_id)
            raise Unauthorized("Invalid refresh token")  # as an unknown token: says nothing of the user
        return {**self.sessions.pair_for(user_id, info.role, sid, fresh), "user": self.users.get(user_id)}

    def logout(self, refresh_token: str) -> str | None:
        """End a refresh token's session; the username it belonged to (None: no such session)."""
        user_id = self.sessions.end_by_refresh_token(refresh_token)
        info = self.users.info(user_id) if user_id else None
        return info.username if info else None

    def change_password(self, principal: Principal, current: str, new: str) -> None:
        if not passwords.verify_password(current, self.users.password_hash(principal.user_id)):
            raise Unauthorized("Current password is incorrect")
        self.users.set_password(principal.user_id, new)
        # Every other login of this user ends; the session making the change stays.
        self.sessions.end_user_sessions(principal.user_id, keep=principal.session_id)
        self._bus.emit("auth.revoked", userId=principal.user_id, keepSessionId=principal.session_id)
        log.info("password changed for user %s; other sessions ended", principal.user_id)

    def disable_mfa(self, principal: Principal, code: str | None, password: str | None) -> None:
        """Turn the caller's own MFA off, proven by a current code or the password (nothing changes otherwise)."""
        if (code is None) == (password is None):
            raise BadRequest("Exactly one of code or password is required")
        if not self.mfa.enabled(principal.user_id):
            raise NotFound("Multi-factor authentication is not enabled")
        if password is not None:
            if not passwords.verify_password(password, self.users.password_hash(principal.user_id)):
                raise BadRequest("Password is incorrect")
        else:
            self.mfa.require_code(principal.user_id, code or "")
        self.mfa.disable(principal.user_id, by=principal.username)

    def reset_mfa(self, user_id: str, by: str | None) -> None:
        """An administrator turns another user's MFA off (a lost phone and lost backup codes)."""
        if self.users.info(user_id) is None:
            raise NotFound("User not found")
        self.mfa.disable(user_id, by=by)

    def _revoke_user(self, user_id: str) -> None:
        self.sessions.end_user_sessions(user_id)
        if self.users.info(user_id) is None:
            self.tokens.forget_user(user_id)
            self.mfa.forget_user(user_id)
        self._bus.emit("auth.revoked", userId=user_id)

    # ---- credentials -------------------------------------------------------------------------
    def principal_from_token(self, token: str) -> Principal:
        """The caller behind a JWT access token or an API token; Unauthorized when not valid."""
        if token.startswith(API_TOKEN_PREFIX):
            resolved = self.tokens.resolve(token)
            info = self.users.info(resolved[1]) if resolved else None
            if info is None or not info.enabled:
                raise Unauthorized("Invalid API token")
            return Principal(info.id, info.username, info.role, "api_token", token_id=resolved[0])
        user_id, sid = self.sessions.verify_access(token)
        info = self.users.info(user_id)
        if info is None or not info.enabled:
            raise Unauthorized("Invalid or expired token")
        # The role is the user's current one, not the one the token was issued with.
        return Principal(info.id, info.username, info.role, "jwt", session_id=sid)

    def principal_from_header(self, header: str) -> Principal:
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("Authentication required")
        return self.principal_from_token(token.strip())

    def principal_or_none(self, header: str) -> Principal | None:
        if not header:
            return None
        try:
            return self.principal_from_header(header)
        except Unauthorized:
            return None

    def still_valid(self, principal: Principal) -> bool:
        """Whether a credential accepted earlier (a WebSocket's) still stands, role unchanged."""
        info = self.users.info(principal.user_id)
        if info is None or not info.enabled or info.role != principal.role:
            return False
        if principal.kind == "api_token":
            return self.tokens.is_live(principal.token_id or "")
        return self.sessions.is_live(principal.session_id or "", principal.user_id)
