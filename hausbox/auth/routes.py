"""Routes: /auth (sign-in flows), /me (own account and API tokens), /users (administration); the
MFA routes are in ``mfa_routes.py``."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.auth import mfa_routes
from hausbox.api.schema import BOOLEAN, FREE_FORM_MAX_BYTES, STRING, nullable, obj, one_of, text

CREDENTIALS = obj(required={"username": text(64), "password": STRING})


def status(call: Call) -> dict[str, Any]:
    return {"setupRequired": not call.engine.auth.has_users()}


def setup(call: Call) -> dict[str, Any]:
    b = call.body
    return call.engine.auth.setup(b["username"], b["password"], b["displayName"], b.get("language"))


def login(call: Call) -> dict[str, Any]:
    call.audit_actor = call.body["username"]
    return call.engine.auth.login(call.body["username"], call.body["password"])


def refresh(call: Call) -> dict[str, Any]:
    return call.engine.auth.refresh(call.body["refreshToken"])


def logout(call: Call) -> None:
    call.audit_actor = call.engine.auth.logout(call.body["refreshToken"])  # the trail names whose session ended


def me(call: Call) -> dict[str, Any]:
    return call.engine.auth.users.get(call.principal.user_id)


def update_me(call: Call) -> dict[str, Any]:
    return call.engine.auth.users.set_display_name(call.principal.user_id, call.body["displayName"], by=call.actor)


def set_preferences(call: Call) -> dict[str, Any]:
    return call.engine.auth.users.set_preferences(call.principal.user_id, call.body["preferences"], by=call.actor)


def change_password(call: Call) -> dict[str, Any]:
    call.engine.auth.change_password(call.principal, call.body["currentPassword"], call.body["newPassword"])
    return {"success": True}


def list_tokens(call: Call) -> list[dict[str, Any]]:
    return call.engine.auth.tokens.list(call.principal.user_id)


def create_token(call: Call) -> dict[str, Any]:
    return call.engine.auth.tokens.create(call.principal.user_id, call.body["name"], call.body.get("expiresAt"), by=call.actor)


def delete_token(call: Call, id: str) -> None:
    call.engine.auth.tokens.delete(call.principal.user_id, id, by=call.actor)


def list_users(call: Call) -> list[dict[str, Any]]:
    return call.engine.auth.users.list()


def create_user(call: Call) -> dict[str, Any]:
    b = call.body
    return call.engine.auth.users.create(b["username"], b["password"], b["displayName"], b["role"], by=call.actor)


def update_user(call: Call, id: str) -> dict[str, Any]:
    b = call.body
    return call.engine.auth.users.update(id, display_name=b.get("displayName"), role=b.get("role"), enabled=b.get("enabled"), by=call.actor)


def delete_user(call: Call, id: str) -> None:
    call.engine.auth.users.delete(id, acting_user_id=call.principal.user_id, by=call.actor)


ROLE = one_of("admin", "standard")
REFRESH = obj(required={"refreshToken": text()})

ROUTES = [
    Route("GET", "/auth/status", status, summary="Whether first-run setup is still required"),
    Route(
        "POST",
        "/auth/setup",
        setup,
        body=obj(required={"username": text(64), "password": STRING, "displayName": STRING}, optional={"language": STRING}),
        status=201,
        summary="Create the first administrator (first run only)",
    ),
    Route(
        "POST",
        "/auth/login",
        login,
        body=CREDENTIALS,
        checks_secret=True,
        response={"oneOf": [mfa_routes.SIGNED_IN, mfa_routes.CHALLENGE], "description": "A token pair, or an MFA challenge"},
        summary="Sign in: a token pair, or an MFA challenge when the account has MFA on (10 attempts a minute per address and per account; 429 with Retry-After beyond)",
    ),
    Route("POST", "/auth/refresh", refresh, body=REFRESH, summary="Exchange a refresh token for a new pair"),
    Route("POST", "/auth/logout", logout, body=REFRESH, summary="End the session of a refresh token"),
    Route("GET", "/me", me, summary="Own profile"),
    Route("PUT", "/me", update_me, body=obj(required={"displayName": STRING}), summary="Update own display name"),
    Route(
        "PUT",
        "/me/preferences",
        set_preferences,
        body=obj(required={"preferences": {"type": "object"}}),
        summary="Replace own preferences",
        max_body_bytes=FREE_FORM_MAX_BYTES,
    ),
    Route(
        "PUT",
        "/me/password",
        change_password,
        body=obj(required={"currentPassword": STRING, "newPassword": STRING}),
        checks_secret=True,
        summary="Change own password; ends the other sessions (limited as login)",
    ),
    Route("GET", "/me/tokens", list_tokens, summary="Own API tokens"),
    Route(
        "POST",
        "/me/tokens",
        create_token,
        body=obj(required={"name": text(100)}, optional={"expiresAt": nullable(STRING)}),
        status=201,
        summary="Create an API token (the token string is shown once)",
    ),
    Route("DELETE", "/me/tokens/<id>", delete_token, summary="Delete an own API token"),
    Route("GET", "/users", list_users, summary="All users"),
    Route(
        "POST",
        "/users",
        create_user,
        body=obj(required={"username": text(64), "password": STRING, "displayName": STRING, "role": ROLE}),
        status=201,
        summary="Create a user",
    ),
    Route(
        "PUT",
        "/users/<id>",
        update_user,
        body=obj(optional={"displayName": STRING, "role": ROLE, "enabled": BOOLEAN}),
        summary="Update a user's display name, role or enabled flag",
    ),
    Route("DELETE", "/users/<id>", delete_user, summary="Delete a user (not yourself, not the last admin)"),
    *mfa_routes.ROUTES,
]
