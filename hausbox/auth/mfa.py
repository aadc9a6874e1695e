"""Multi-factor authentication: TOTP (RFC 6238, pyotp), single-use backup codes, trusted devices,
and the login challenge that stands between a right password and a token pair.

- A TOTP secret is pending from setup until a code made from it is confirmed; only then does login
  ask for a second factor. The secret is shown at setup only and never logged (the log redactor
  is given it).
- A code is accepted one 30 s step either side of now (a phone a little early or late), and once:
  the last accepted step is kept per user, and a code of that step or an earlier one is refused, so
  a code seen over a shoulder or replayed cannot be used again.
- Backup codes (10, shown once) are stored as salted sha256. Each is 50 random bits, so a slow hash
  would protect nothing that is not already lost with the database (it holds the TOTP secret), and
  bcrypt would cost up to 10 slow hashes per check.
- A challenge is a random token held in memory (a restart only means signing in again). It expires
  after 5 minutes, is used once, and dies after 5 wrong answers.
- A trusted-device token (random, stored as sha256, valid 30 days) stands in for a code on the
  device that holds it; it is shown once and can be revoked.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import re
import secrets
import uuid
from dataclasses import dataclass
from typing import Any, Callable

import pyotp
import segno
from pony import orm

from hausbox.auth.api_tokens import token_json as device_json  # a trusted device has an API token's fields
from hausbox.auth.sessions import sha256_hex
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.core.logs import by_actor, get_logger

ISSUER = "hausbox"
STEP_S = 30
WINDOW_STEPS = 1
CHALLENGE_TTL_MS = 5 * 60_000
CHALLENGE_MAX_FAILURES = 5
CHALLENGES_MAX = 1000  # in memory: beyond it the oldest are dropped
BACKUP_CODE_COUNT = 10
BACKUP_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read off paper and typed back
BACKUP_CODE_LENGTH = 10
TRUSTED_DEVICE_TTL_MS = 30 * 24 * 3600 * 1000
METHODS = ["totp", "backupCode", "trustedDevice"]

log = get_logger("auth")


@dataclass
class Challenge:
    user_id: str
    username: str
    expires_ms: int
    failures: int = 0


def normalized_code(code: str) -> str:
    """A TOTP code as typed ("123 456") -> "123456"; BadRequest when it cannot be one."""
    digits = re.sub(r"\s", "", code)
    if not re.fullmatch(r"[0-9]{6}", digits):
        raise BadRequest("code must be 6 digits")
    return digits


def _normalized_backup_code(code: str) -> str:
    return re.sub(r"[\s-]", "", code).lower()


def _new_backup_code() -> str:
    raw = "".join(secrets.choice(BACKUP_ALPHABET) for _ in range(BACKUP_CODE_LENGTH))
    return f"{raw[:5]}-{raw[5:]}"


def _hash_backup_code(code: str, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(8)
    return f"{salt}${hashlib.sha256(f'{salt}:{_normalized_backup_code(code)}'.encode()).hexdigest()}"


def _backup_code_matches(code: str, stored: str) -> bool:
    salt = stored.split("$", 1)[0]
    return hmac.compare_digest(_hash_backup_code(code, salt), stored)


def qr_svg(uri: str) -> str:
    """The provisioning URI as a standalone SVG QR code (usable as an <img> data URI)."""
    out = io.BytesIO()
    segno.make(uri, error="m").save(out, kind="svg", scale=4, xmldecl=False, svgns=True)
    return out.getvalue().decode("utf-8")


class MfaService:
    def __init__(self, db: orm.Database, clock: Clock, add_secret: Callable[[str], None]):
        self._db = db
        self._clock = clock
        self._add_secret = add_secret
        self._challenges: dict[str, Challenge] = {}  # sha256 of the challenge token -> challenge
        with orm.db_session:
            for row in db.UserMfa.select():
                for secret in (row.secret, row.pending_secret):
                    if secret:
                        add_secret(secret)

    # ---- reads -------------------------------------------------------------------------------
    def enabled(self, user_id: str) -> bool:
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            return bool(row and row.secret)

    def status(self, user_id: str) -> dict[str, Any]:
        now = self._clock.now_ms()
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            codes = self._db.MfaBackupCode.select(lambda c: c.user_id == user_id and c.used_at is None).count()
            devices = self._db.MfaTrustedDevice.select(lambda d: d.user_id == user_id and d.expires_at > now).order_by(
                lambda d: d.created_at
            )
            return {
                "enabled": bool(row and row.secret),
                "pendingSetup": bool(row and row.pending_secret),
                "enabledAt": iso_utc(row.enabled_at) if row else None,
                "backupCodesLeft": codes,
                "trustedDevices": [device_json(d) for d in devices],
            }

    # ---- setup and confirmation --------------------------------------------------------------
    def begin_setup(self, user_id: str, username: str) -> dict[str, Any]:
        """A new pending secret (replacing any earlier pending one); not active until confirmed."""
        secret = pyotp.random_base32()
        self._add_secret(secret)
        stamp = self._clock.now_ms()
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            if row is not None and row.secret:
                raise Conflict("Multi-factor authentication is already enabled: disable it first")
            if row is None:
                self._db.UserMfa(user_id=user_id, pending_secret=secret, updated_at=stamp)
            else:
                row.pending_secret = secret
                row.updated_at = stamp
        uri = pyotp.TOTP(secret).provisioning_uri(name=username, issuer_name=ISSUER)
        log.info("MFA setup started for user %s", user_id)
        return {
            "secret": secret,
            "otpauthUri": uri,
            "qrSvg": qr_svg(uri),
            "issuer": ISSUER,
            "accountName": username,
            "algorithm": "SHA1",
            "digits": 6,
            "period": STEP_S,
        }

    def cancel_setup(self, user_id: str) -> None:
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            if row is None or not row.pending_secret:
                raise NotFound("No MFA setup pending")
            if row.secret:
                row.pending_secret = None
                row.updated_at = self._clock.now_ms()
            else:
                row.delete()
        log.info("MFA setup cancelled for user %s", user_id)

    def confirm(self, user_id: str, code: str) -> list[str]:
        """Activate the pending secret with a code made from it: the new backup codes (shown once)."""
        code = normalized_code(code)
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            if row is None or not row.pending_secret:
                raise Conflict("No MFA setup pending: start one first")
            step = self._matching_step(row.pending_secret, code, None)
            if step is None:
                raise BadRequest("Invalid code")
            stamp = self._clock.now_ms()
            row.secret, row.pending_secret = row.pending_secret, None
            row.last_step = step  # the confirming code is spent too
            row.enabled_at = row.updated_at = stamp
            codes = self._replace_backup_codes(user_id, stamp)
        log.info("MFA enabled for user %s", user_id)
        return codes

    # ---- second factors ----------------------------------------------------------------------
    def _matching_step(self, secret: str, code: str, after_step: int | None) -> int | None:
        """The time step ``code`` belongs to, within the window and later than ``after_step``."""
        totp = pyotp.TOTP(secret, interval=STEP_S)
        current = self._clock.now_ms() // 1000 // STEP_S
        for step in range(current - WINDOW_STEPS, current + WINDOW_STEPS + 1):
            if (after_step is None or step > after_step) and hmac.compare_digest(totp.generate_otp(step), code):
                return step
        return None

    def check_code(self, user_id: str, code: str) -> bool:
        """Whether ``code`` is a current TOTP code of the user not used before (it is spent if so)."""
        code = normalized_code(code)
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            if row is None or not row.secret:
                return False
            step = self._matching_step(row.secret, code, row.last_step)
            if step is None:
                return False
            row.last_step = step
            return True

    def require_code(self, user_id: str, code: str) -> None:
        """For a signed-in user's own change: the MFA must be on and the code right (400 otherwise)."""
        if not self.enabled(user_id):
            raise Conflict("Multi-factor authentication is not enabled")
        if not self.check_code(user_id, code):
            raise BadRequest("Invalid code")

    def use_backup_code(self, user_id: str, code: str) -> bool:
        """Whether ``code`` is an unused backup code of the user (it is spent if so)."""
        with orm.db_session:
            for row in self._db.MfaBackupCode.select(lambda c: c.user_id == user_id and c.used_at is None):
                if _backup_code_matches(code, row.code_hash):
                    row.used_at = self._clock.now_ms()
                    log.info("MFA backup code used by user %s", user_id)
                    return True
        return False

    def regenerate_backup_codes(self, user_id: str, code: str) -> list[str]:
        self.require_code(user_id, code)
        with orm.db_session:
            codes = self._replace_backup_codes(user_id, self._clock.now_ms())
        log.info("MFA backup codes regenerated for user %s", user_id)
        return codes

    def _replace_backup_codes(self, user_id: str, stamp: int) -> list[str]:
        """Inside a db_session: new codes replace every earlier one of the user."""
        self._db.MfaBackupCode.select(lambda c: c.user_id == user_id).delete(bulk=True)
        codes = [_new_backup_code() for _ in range(BACKUP_CODE_COUNT)]
        for code in codes:
            self._db.MfaBackupCode(id=str(uuid.uuid4()), user_id=user_id, code_hash=_hash_backup_code(code), created_at=stamp)
        return codes

    # ---- trusted devices ---------------------------------------------------------------------
    def trust_device(self, user_id: str, name: str) -> dict[str, Any]:
        """A new trusted-device token for the user: the device's JSON and ``token`` (shown once)."""
        token = secrets.token_hex(32)
        stamp = self._clock.now_ms()
        with orm.db_session:
            self._db.MfaTrustedDevice.select(lambda d: d.expires_at <= stamp).delete(bulk=True)
            row = self._db.MfaTrustedDevice(
                id=str(uuid.uuid4()), user_id=user_id, name=name, token_hash=sha256_hex(token),
                expires_at=stamp + TRUSTED_DEVICE_TTL_MS, created_at=stamp,
            )  # fmt: skip
            orm.commit()
            result = {**device_json(row), "token": token}
        log.info("MFA trusted device %s (%s) added for user %s", result["id"], name, user_id)
        return result

    def check_device(self, user_id: str, token: str) -> bool:
        """Whether ``token`` is a live trusted-device token of the user (its use is recorded)."""
        now = self._clock.now_ms()
        with orm.db_session:
            row = self._db.MfaTrustedDevice.get(token_hash=sha256_hex(token))
            if row is None or row.user_id != user_id or row.expires_at <= now:
                return False
            row.last_used_at = now
            return True

    def revoke_device(self, user_id: str, device_id: str) -> None:
        with orm.db_session:
            row = self._db.MfaTrustedDevice.get(id=device_id)
            if row is None or row.user_id != user_id:
                raise NotFound("Trusted device not found")
            row.delete()
        log.info("MFA trusted device %s of user %s revoked", device_id, user_id)

    # ---- turning it off ----------------------------------------------------------------------
    def disable(self, user_id: str, by: str | None = None) -> bool:
        """Remove the user's secret, backup codes, trusted devices and challenges; whether any was set."""
        with orm.db_session:
            row = self._db.UserMfa.get(user_id=user_id)
            had = row is not None
            if row is not None:
                row.delete()
            self._db.MfaBackupCode.select(lambda c: c.user_id == user_id).delete(bulk=True)
            self._db.MfaTrustedDevice.select(lambda d: d.user_id == user_id).delete(bulk=True)
        self.forget_user(user_id)
        if had:
            log.info("MFA disabled for user %s%s", user_id, by_actor(by))
        return had

    def forget_user(self, user_id: str) -> None:
        """Drop the user's pending challenges (their rows go with the user or with ``disable``)."""
        self._challenges = {key: c for key, c in self._challenges.items() if c.user_id != user_id}

    # ---- login challenges --------------------------------------------------------------------
    def challenge(self, user_id: str, username: str) -> dict[str, Any]:
        """What login answers instead of tokens when the user has MFA on."""
        token = secrets.token_urlsafe(32)
        now = self._clock.now_ms()
        self._challenges = {key: c for key, c in self._challenges.items() if c.expires_ms > now}
        while len(self._challenges) >= CHALLENGES_MAX:
            del self._challenges[next(iter(self._challenges))]  # the oldest
        expires = now + CHALLENGE_TTL_MS
        self._challenges[sha256_hex(token)] = Challenge(user_id, username, expires)
        log.info("login of user %s awaits a second factor", user_id)
        return {"mfaRequired": True, "challenge": token, "methods": list(METHODS), "expiresAt": iso_utc(expires)}

    def peek_challenge(self, token: str) -> Challenge | None:
        """The live challenge of a token, left in place (to name who is trying)."""
        challenge = self._challenges.get(sha256_hex(token))
        return challenge if challenge is not None and challenge.expires_ms > self._clock.now_ms() else None

    def take_challenge(self, token: str) -> Challenge | None:
        """The live challenge of a token, removed: one answer at a time, and a right one ends it."""
        challenge = self._challenges.pop(sha256_hex(token), None)
        return challenge if challenge is not None and challenge.expires_ms > self._clock.now_ms() else None

    def failed(self, token: str, challenge: Challenge) -> bool:
        """A wrong answer to a taken challenge: put it back unless it had too many; whether it lives."""
        challenge.failures += 1
        if challenge.failures >= CHALLENGE_MAX_FAILURES:
            log.info("MFA challenge of user %s ended after %d wrong answers", challenge.user_id, challenge.failures)
            return False
        self._challenges[sha256_hex(token)] = challenge
        return True
