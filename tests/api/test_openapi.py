"""The OpenAPI document lists every registered route, with its access mark and its body schema."""

from __future__ import annotations

import re

from hausbox.api.access import access_for
from tests.api.routes_under_test import routes


def _openapi_path(path: str) -> str:
    return "/api/v1" + re.sub(r"<([^>:]+)[^>]*>", r"{\1}", path)


def test_every_registered_route_is_documented(home):
    document = home.admin.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    documented = {(method.upper(), path) for path, operations in document["paths"].items() for method in operations}
    registered = {(route.method, _openapi_path(route.path)) for route in routes()}
    assert registered == documented
    for route in routes():
        operation = document["paths"][_openapi_path(route.path)][route.method.lower()]
        assert operation["x-access"] == access_for(route.method, route.path)
        if route.body is not None:
            assert operation["requestBody"]["content"]["application/json"]["schema"] == route.body
        # Routes that check a password or a code say they may answer 429 with Retry-After.
        assert ("429" in operation["responses"]) == route.checks_secret
        if route.checks_secret:
            assert "Retry-After" in operation["responses"]["429"]["headers"]


def test_the_served_app_registers_exactly_the_route_table(tmp_path):
    from hausbox.api.app import build_app
    from hausbox.config import Config
    from hausbox.engine import Engine

    engine = Engine(Config(data_dir=tmp_path, log_level="warn", mdns=False))
    try:
        bottle_app = build_app(engine).app
        served = {(r.method, r.rule) for r in bottle_app.routes}
        assert served == {(route.method, route.full_path) for route in routes()}
    finally:
        engine.stop()


def test_path_parameters_are_named_the_one_way():
    # <name>, never bottle's old :name (deprecated, and the OpenAPI document would show it literally).
    old_syntax = [f"{route.method} {route.path}" for route in routes() if ":" in route.path]
    assert old_syntax == []


def test_operation_ids_are_unique(home):
    document = home.admin.get("/openapi.json").json()
    ids = [op["operationId"] for operations in document["paths"].values() for op in operations.values()]
    assert len(ids) == len(set(ids))


def test_the_websocket_and_its_credential_forms_are_documented(home):
    described = home.admin.get("/openapi.json").json()["x-websocket"]
    assert described["path"] == "/ws"
    assert "?token=" in described["description"] and "bearer.<token>" in described["description"]
    assert {"4001", "4003"} <= set(described["closeCodes"])
