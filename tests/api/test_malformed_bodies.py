"""No route answers 500 to a malformed body: each gets a 4xx with an ``error`` message, as admin."""

from __future__ import annotations

import json

import pytest

from tests.api.routes_under_test import concrete_path, route_id, routes

WITH_BODY = [r for r in routes() if r.body is not None]
RAW_BODIES = [b"{not json", b"[]", b'"text"', b"123", b"null", b"\xff\xfe\x00", b'{"a":' * 50]
WRONG_VALUES = [None, 12345, -1.5, True, [], {}, "", "x" * 5000, [1, {"a": None}]]


def _assert_clean_4xx(response):
    assert 400 <= response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
    body = response.json()
    assert isinstance(body.get("error"), str) and body["error"]


@pytest.mark.parametrize("route", WITH_BODY, ids=route_id)
def test_unparseable_or_wrong_shape_bodies_are_refused_cleanly(home, route):
    for raw in RAW_BODIES:
        response = home.admin.request(route.method, concrete_path(route), data=raw, headers={"Content-Type": "application/json"})
        _assert_clean_4xx(response)


@pytest.mark.parametrize("route", WITH_BODY, ids=route_id)
def test_every_field_with_a_wrong_value_is_refused_or_harmless(home, route):
    properties = route.body.get("properties", {})
    for name, schema in properties.items():
        for value in WRONG_VALUES:
            response = home.admin.request(route.method, concrete_path(route), data=json.dumps({name: value}), headers={"Content-Type": "application/json"})
            assert response.status_code < 500, f"{name}={value!r}: {response.status_code} {response.text[:300]}"
            if response.status_code >= 400:
                assert isinstance(response.json().get("error"), str)


@pytest.mark.parametrize("route", WITH_BODY, ids=route_id)
def test_an_oversized_body_is_refused(home, route):
    response = home.admin.request(route.method, concrete_path(route), data=b'{"x":"' + b"a" * (route.max_body_bytes + 10) + b'"}', headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]


def test_a_missing_field_is_named(home):
    response = home.admin.post("/users", {"password": "long-enough-1"})
    assert response.status_code == 400
    assert response.json() == {"error": "username is required"}
    response = home.admin.post("/users", {"username": "bob", "password": 5, "displayName": "Bob", "role": "standard"})
    assert response.json() == {"error": "password must be a string"}
