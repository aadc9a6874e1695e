"""Routes of multi-factor authentication: the login challenge's verify step (public), the own-MFA
routes under /me/mfa (any signed-in user, for themselves) and an administrator's reset of a user's."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import BOOLEAN, STRING, array, nullable, obj, text
from hausbox.core.errors import Forbidden

# A code as typed: six digits, a space in the middle allowed ("123 456").
CODE = {"type": "string", "pattern": r"^\s*[0-9]{3}\s?[0-9]{3}\s*$", "description": "A 6-digit code of the authenticator app"}
BACKUP_CODE = text(32) | {"description": "An unused backup code (dashes and case do not matter)"}
INTEGER_COUNT = {"type": "integer", "minimum": 0}
DATE_TIME = {"type": "string", "format": "date-time"}

TRUSTED_DEVICE = obj(
    required={"id": STRING, "name": STRING, "createdAt": DATE_TIME, "lastUsedAt": nullable(DATE_TIME), "expiresAt": DATE_TIME}
)
STATUS = obj(
    required={
        "enabled": BOOLEAN,
        "pendingSetup": BOOLEAN,
        "enabledAt": nullable(DATE_TIME),
        "backupCodesLeft": INTEGER_COUNT,
        "trustedDevices": array(TRUSTED_DEVICE),
    },
    description="Whether MFA is on, a setup pending, the unused backup codes left and the trusted devices (never the secret)",
)
SETUP = obj(
    required={
        "secret": STRING,
        "otpauthUri": STRING,
        "qrSvg": STRING,
        "issuer": STRING,
        "accountName": STRING,
        "algorithm": STRING,
        "digits": INTEGER_COUNT,
        "period": INTEGER_COUNT,
    },
    description="The pending secret (base32, shown this once), its otpauth:// URI and that URI as an SVG QR code",
)
BACKUP_CODES = array(STRING, minItems=10, maxItems=10)
CONFIRMED = obj(required={"enabled": BOOLEAN, "backupCodes": BACKUP_CODES}, description="MFA is on; the 10 single-use backup codes, shown this once")
REGENERATED = obj(required={"backupCodes": BACKUP_CODES}, description="10 new backup codes (shown this once); the old ones no longer work")
SIGNED_IN = obj(
    required={"accessToken": STRING, "refreshToken": STRING, "expiresIn": INTEGER_COUNT, "user": {"type": "object"}},
    optional={"trustedDeviceToken": STRING, "trustedDevice": TRUSTED_DEVICE},
    description="The token pair; with trustDevice, a trusted-device token (shown this once) and the device",
)
CHALLENGE = obj(
    required={"mfaRequired": {"const": True}, "challenge": STRING, "methods": array(STRING), "expiresAt": DATE_TIME},
    description="The password is right and the account has MFA on: answer the challenge at POST /auth/mfa/verify",
)


def verify(call: Call) -> dict[str, Any]:
    b = call.body
    challenge = call.engine.auth.mfa.peek_challenge(b["challenge"])
    call.audit_actor = challenge.username if challenge else None
    return call.engine.auth.verify_mfa(
        b["challenge"], b.get("code"), b.get("backupCode"), b.get("trustedDeviceToken"), bool(b.get("trustDevice")),
        b.get("deviceName") or call.request.get_header("User-Agent"),
    )  # fmt: skip


def mfa_status(call: Call) -> dict[str, Any]:
    return call.engine.auth.mfa.status(call.principal.user_id)


def _signed_in_user(call: Call) -> str:
    """The caller's user id, when signed in with a password. An API token (long-lived, handed to
    other software) may not change the account's second factor: one that leaked could otherwise put
    the owner's logins behind an authenticator the owner does not have."""
    if call.principal.kind == "api_token":
        raise Forbidden("Changing multi-factor authentication needs a signed-in session, not an API token")
    return call.principal.user_id


def mfa_setup(call: Call) -> dict[str, Any]:
    return call.engine.auth.mfa.begin_setup(_signed_in_user(call), call.principal.username)


def mfa_cancel_setup(call: Call) -> None:
    call.engine.auth.mfa.cancel_setup(_signed_in_user(call))


def mfa_confirm(call: Call) -> dict[str, Any]:
    return {"enabled": True, "backupCodes": call.engine.auth.mfa.confirm(_signed_in_user(call), call.body["code"])}


def mfa_disable(call: Call) -> None:
    _signed_in_user(call)
    call.engine.auth.disable_mfa(call.principal, call.body.get("code"), call.body.get("password"))


def mfa_regenerate_backup_codes(call: Call) -> dict[str, Any]:
    return {"backupCodes": call.engine.auth.mfa.regenerate_backup_codes(_signed_in_user(call), call.body["code"])}


def mfa_revoke_device(call: Call, id: str) -> None:
    call.engine.auth.mfa.revoke_device(_signed_in_user(call), id)


def user_mfa_status(call: Call, id: str) -> dict[str, Any]:
    call.engine.auth.users.get(id)  # 404 for an unknown user
    return call.engine.auth.mfa.status(id)


def user_mfa_reset(call: Call, id: str) -> None:
    call.engine.auth.reset_mfa(id, by=call.actor)


ROUTES = [
    Route(
        "POST",
        "/auth/mfa/verify",
        verify,
        body=obj(
            required={"challenge": text(200)},
            optional={"code": CODE, "backupCode": BACKUP_CODE, "trustedDeviceToken": text(200), "trustDevice": BOOLEAN, "deviceName": text(100)},
        ),
        checks_secret=True,
        response=SIGNED_IN,
        summary="Complete a login challenge with one of code, backupCode or trustedDeviceToken (5 wrong answers end it; limited as login)",
    ),
    Route("GET", "/me/mfa", mfa_status, response=STATUS, summary="Own MFA state: enabled, pending setup, backup codes left, trusted devices"),
    Route("POST", "/me/mfa/totp/setup", mfa_setup, response=SETUP, summary="Start TOTP setup: a new secret, not active until confirmed"),
    Route("DELETE", "/me/mfa/totp/setup", mfa_cancel_setup, summary="Cancel a pending TOTP setup"),
    Route(
        "POST",
        "/me/mfa/totp/confirm",
        mfa_confirm,
        body=obj(required={"code": CODE}),
        checks_secret=True,
        response=CONFIRMED,
        summary="Confirm the pending secret with a code from it: MFA is on, the backup codes are shown once",
    ),
    Route(
        "DELETE",
        "/me/mfa/totp",
        mfa_disable,
        body=obj(optional={"code": CODE, "password": STRING}),
        checks_secret=True,
        summary="Turn own MFA off with a current code or the password (backup codes and trusted devices go too)",
    ),
    Route(
        "POST",
        "/me/mfa/backup-codes/regenerate",
        mfa_regenerate_backup_codes,
        body=obj(required={"code": CODE}),
        checks_secret=True,
        response=REGENERATED,
        summary="Replace own backup codes (needs a current code)",
    ),
    Route("DELETE", "/me/mfa/trusted-devices/<id>", mfa_revoke_device, summary="Revoke an own trusted device"),
    Route("GET", "/users/<id>/mfa", user_mfa_status, response=STATUS, summary="A user's MFA state (never the secret)"),
    Route("DELETE", "/users/<id>/mfa", user_mfa_reset, summary="Reset a user's MFA: secret, backup codes and trusted devices removed"),
]
