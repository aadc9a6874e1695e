"""Every request body's required and optional fields, as the spec's Endpoints table lists them.

The table below is copied from the spec (``Request`` column, verbatim): a field without ``?`` is
required, one with ``?`` optional. It is not derived from the code, so a schema that drifts from the
spec fails here. Spec rows whose route is not implemented yet are checked once it is; a route with a
body that the spec does not list field by field must say why in ``NOT_LISTED``.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.api.routes_under_test import MISSING_ID, concrete_path, route_id, routes

SPEC_BODIES = {
    ("POST", "/auth/setup"): "{ username, password, displayName, language? }",
    ("POST", "/auth/login"): "{ username, password }",
    ("POST", "/auth/refresh"): "{ refreshToken }",
    ("POST", "/auth/logout"): "{ refreshToken }",
    ("PUT", "/me"): "{ displayName }",
    ("PUT", "/me/preferences"): "{ preferences }",
    ("PUT", "/me/password"): "{ currentPassword, newPassword }",
    ("POST", "/me/tokens"): "{ name, expiresAt? }",
    ("POST", "/users"): "{ username, password, displayName, role }",
    ("PUT", "/users/:id"): "{ displayName?, role?, enabled? }",
    ("PUT", "/devices/:id"): "{ name?, zoneId? }",
    ("POST", "/equipments"): "{ name, type, zoneId, icon?, description?, deviceIds? }",
    ("PUT", "/equipments/:id"): "{ name?, type?, zoneId?, icon?, description?, enabled?, timedCommand?, separateSupply? }",
    ("POST", "/equipments/:id/orders/:alias"): "{ value }",
    ("POST", "/equipments/:id/data-bindings"): "{ deviceDataId, alias }",
    ("POST", "/equipments/:id/order-bindings"): "{ deviceOrderId, alias }",
    ("POST", "/zones"): "{ name, parentId?, icon?, description?, displayOrder? }",
    ("PUT", "/zones/:id"): "{ name?, parentId?, icon?, description?, displayOrder? }",  # "same fields, all optional"
    ("PUT", "/zones/reorder"): "{ parentId, orderedIds }",
    ("POST", "/zones/:id/orders/:orderKey"): "{ value? }",
    ("POST", "/modes"): "{ name, icon?, description? }",
    ("PUT", "/modes/:id"): "{ name?, icon?, description? }",
    ("PUT", "/modes/:id/impacts/:zoneId"): "{ actions }",
    ("PUT", "/calendar/active"): "{ profileId }",
    ("POST", "/calendar/profiles/:id/slots"): "{ days, time, modeActions }",
    ("PUT", "/calendar/slots/:slotId"): "{ days?, time?, modeActions? }",
    ("POST", "/recipe-instances"): "{ recipeId, params }",
    ("PUT", "/recipe-instances/:id"): "{ params }",
    ("POST", "/recipe-instances/:id/actions"): "{ action, payload? }",
    ("POST", "/dashboard/widgets"): "{ type, equipmentId?, zoneId?, family?, label?, icon? }",
    ("PATCH", "/dashboard/widgets/:id"): "{ label?, icon?, config? }",
    ("PUT", "/dashboard/widgets/order"): "{ order }",
    ("POST", "/charts"): "{ name, config }",
    ("PUT", "/charts/:id"): "{ name?, config? }",
    ("PUT", "/settings/energy/tariff"): "{ schedules, prices }",
    ("PUT", "/history/bindings/:equipmentId/:bindingId"): "{ historize }",
    ("POST", "/plugins/sources"): "{ repo }",
    ("POST", "/plugins/sources/remove"): "{ repo }",
    ("POST", "/plugins/install"): "{ repo, confirmed?, expectedSha256? }",
    ("POST", "/plugins/:id/update"): "{ confirmed?, expectedSha256? }",
    ("POST", "/mqtt-brokers"): "{ name, url, username?, password? }",
    ("PUT", "/mqtt-brokers/:id"): "{ name?, url?, username?, password? }",  # "same fields, all optional"
    ("POST", "/mqtt-publishers"): "{ name, brokerId, topic, enabled?, onChangeOnly? }",
    ("PUT", "/mqtt-publishers/:id"): "{ name?, brokerId?, topic?, enabled?, onChangeOnly? }",
    ("POST", "/mqtt-publishers/:id/mappings"): "{ publishKey, sourceType, sourceId, sourceKey, enabled? }",
    ("POST", "/notification-publishers"): "{ name, channelType, channelConfig, enabled? }",
    ("POST", "/notification-publishers/:id/mappings"): "{ message, sourceType, sourceId, sourceKey, throttleMs? }",
    ("POST", "/equipments/:id/action-bindings"): "{ actionValue, effectType, config }",
    ("PUT", "/logs/level"): "{ level }",
    ("POST", "/backup/restore-local"): "{ filename }",
}

# Routes with a body the spec does not list field by field.
NOT_LISTED = {
    ("PUT", "/settings"): "a flat key to value object",
    ("PUT", "/equipments/:id/action-bindings/:bindingId"): "body: not shown",
    ("POST", "/equipments/:id/timed-action"): "all four fields or an empty object (test_timed_action_takes_all_four_fields_or_none)",
    ("PUT", "/notification-publishers/:id"): "body: not shown",
    ("PUT", "/notification-publishers/:id/mappings/:mappingId"): "body: not shown",
    ("POST", "/push/subscriptions"): "payload shapes of the push routes: not shown (a browser's PushSubscription: endpoint, keys)",
    ("DELETE", "/push/subscriptions"): "payload shapes of the push routes: not shown ({endpoint})",
    ("PUT", "/mqtt-publishers/:id/mappings/:mappingId"): "any of the mapping fields",
    ("POST", "/auth/mfa/verify"): "the MFA challenge flow: not shown (tests/auth/test_mfa.py)",
    ("POST", "/me/mfa/totp/confirm"): "payload shapes of the MFA routes: not shown ({code})",
    ("DELETE", "/me/mfa/totp"): "payload shapes of the MFA routes: not shown ({code} or {password})",
    ("POST", "/me/mfa/backup-codes/regenerate"): "payload shapes of the MFA routes: not shown ({code})",
}


def spec_path(path: str) -> str:
    return re.sub(r"<([^>]+)>", r":\1", path)


def fields(request: str) -> tuple[list[str], list[str]]:
    """``(required, optional)`` from a spec cell such as ``{ name, icon? }``."""
    names = [name.strip() for name in request.strip("{} ").split(",")]
    return [n for n in names if not n.endswith("?")], [n[:-1] for n in names if n.endswith("?")]


WITH_BODY = [route for route in routes() if route.body is not None]
LISTED = [route for route in WITH_BODY if (route.method, spec_path(route.path)) in SPEC_BODIES]
REQUIRED = [(route, name) for route in LISTED for name in fields(SPEC_BODIES[route.method, spec_path(route.path)])[0]]


def spec_of(route) -> tuple[list[str], list[str]]:
    return fields(SPEC_BODIES[route.method, spec_path(route.path)])


def test_every_route_with_a_body_is_in_the_spec_table_or_says_why_not():
    unlisted = [route_id(r) for r in WITH_BODY if (r.method, spec_path(r.path)) not in {**SPEC_BODIES, **NOT_LISTED}]
    assert unlisted == []


@pytest.mark.parametrize("route", LISTED, ids=route_id)
def test_the_schema_requires_exactly_what_the_spec_requires(route):
    required, optional = spec_of(route)
    declared = route.body.get("properties", {})
    assert sorted(route.body.get("required", [])) == sorted(required)
    assert [name for name in optional if name not in declared] == [], "an optional field of the spec is not declared"


@pytest.mark.parametrize("route, name", REQUIRED, ids=lambda item: item if isinstance(item, str) else route_id(item))
def test_a_body_without_a_required_field_is_a_400_naming_it(home, route, name):
    others = {other: None for other in spec_of(route)[0] if other != name}
    response = home.admin.request(route.method, concrete_path(route), data=json.dumps(others), headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json()) == (400, {"error": f"{name} is required"})


@pytest.mark.parametrize("route", LISTED, ids=route_id)
def test_optional_fields_may_be_left_out(home, route):
    required, optional = spec_of(route)
    body = {name: None for name in required}
    response = home.admin.request(route.method, concrete_path(route), data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert not any(f"{name} is required" in response.text for name in optional), response.text


TIMED_ACTION = {"alias": "state", "value": None, "revertValue": "OFF", "durationMs": 60_000}


@pytest.mark.parametrize("name", list(TIMED_ACTION))
def test_timed_action_takes_all_four_fields_or_none(home, name):
    path = f"/equipments/{MISSING_ID}/timed-action"
    partial = {key: value for key, value in TIMED_ACTION.items() if key != name}
    response = home.admin.post(path, partial)
    assert (response.status_code, response.json()) == (400, {"error": f"{name} is required"})
    # All four, none, or only fields the spec does not know: past validation (the equipment is missing).
    for body in (TIMED_ACTION, {}, {"comment": "x"}):
        assert home.admin.post(path, body).status_code == 404, body
