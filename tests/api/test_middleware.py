"""HTTP middleware (hausbox/api/middleware.py), seen from a client: security headers on every
response and the cross-origin policy (localhost by default, ``http.corsOrigins`` to widen it).

It lives with the system suites because it is exercised through the system routes."""

from __future__ import annotations

import pytest
import requests

from hausbox.api.middleware import origin_allowed

LOCAL_ORIGIN = "http://localhost:5173"
EVIL_ORIGIN = "http://evil.example"


def raw(home, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
    headers = dict(kwargs.pop("headers", {}))
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return requests.request(method, home.server.url + path, headers=headers, timeout=10, **kwargs)


def preflight(home, origin: str, method: str = "PUT", path: str = "/api/v1/settings") -> requests.Response:
    return raw(
        home,
        "OPTIONS",
        path,
        headers={"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization, content-type"},
    )


def assert_security_headers(response: requests.Response) -> None:
    headers = response.headers
    csp = headers.get("Content-Security-Policy", "")
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert headers.get("Strict-Transport-Security", "").startswith("max-age=")
    assert int(headers["Strict-Transport-Security"].split("=", 1)[1].split(";")[0]) >= 15_552_000  # >= 180 days
    assert headers.get("X-Frame-Options") == "DENY"
    assert headers.get("X-Content-Type-Options") == "nosniff"


@pytest.fixture
def cors_setting(home):
    yield
    assert home.admin.put("/settings", {"http.corsOrigins": None}).status_code == 200


# ---- security headers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, who, body, status",
    [
        ("GET", "/api/v1/health", None, None, 200),
        ("GET", "/api/v1/auth/status", None, None, 200),
        ("GET", "/api/v1/settings", "admin", None, 200),
        ("PUT", "/api/v1/settings", "admin", {"test.mw": 1}, 200),
        ("GET", "/api/v1/no-such-route", None, None, 404),
        ("GET", "/", None, None, 200),  # the web console's index
        ("GET", "/index.html", "admin", None, 404),
        ("GET", "/api/v1/me", None, None, 401),
        ("GET", "/api/v1/settings", "garbage", None, 401),
        ("PUT", "/api/v1/settings", "admin", {"bad key": 1}, 400),
        ("GET", "/api/v1/logs", "admin-bad-query", None, 400),
        ("GET", "/api/v1/logs", "standard", None, 403),
        ("DELETE", "/api/v1/health", None, None, 405),
        ("POST", "/api/v1/auth/login", None, {"username": "nobody", "password": "wrong-password"}, 401),
    ],
)
def test_security_headers_on_every_response(home, method, path, who, body, status):
    token = {"admin": home.admin.token, "admin-bad-query": home.admin.token, "garbage": "garbage", None: None}.get(who)
    if who == "standard":
        token = home.new_user("standard")[1].token
    params = {"level": "loud"} if who == "admin-bad-query" else None
    response = raw(home, method, path, token, json=body, params=params)
    assert response.status_code == status, response.text
    assert_security_headers(response)
    if status >= 400:
        assert response.headers["Content-Type"].startswith("application/json")
        assert "error" in response.json()


def test_security_headers_on_preflight_answers(home):
    assert_security_headers(preflight(home, LOCAL_ORIGIN))
    assert_security_headers(preflight(home, EVIL_ORIGIN))


def test_security_headers_are_not_duplicated(home):
    response = raw(home, "GET", "/api/v1/health", headers={"Origin": LOCAL_ORIGIN})
    for name in ("Content-Security-Policy", "Strict-Transport-Security", "X-Frame-Options", "X-Content-Type-Options"):
        assert len(response.raw.headers.getlist(name)) == 1, name


# ---- CORS ----------------------------------------------------------------------------------------


def test_a_localhost_origin_is_allowed_by_default(home):
    response = raw(home, "GET", "/api/v1/health", headers={"Origin": LOCAL_ORIGIN})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == LOCAL_ORIGIN
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in response.headers.get("Vary", "")

    for origin in ("http://127.0.0.1:8080", "https://localhost", "http://[::1]:3000"):
        answered = raw(home, "GET", "/api/v1/health", headers={"Origin": origin})
        assert answered.headers.get("Access-Control-Allow-Origin") == origin


def test_a_localhost_preflight_answers_204_with_the_allowed_methods(home):
    response = preflight(home, LOCAL_ORIGIN)
    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["Access-Control-Allow-Origin"] == LOCAL_ORIGIN
    methods = {m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")}
    assert {"GET", "POST", "PUT", "PATCH", "DELETE"} <= methods
    allowed_headers = {h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed_headers
    # A preflight needs no credential, even for an admin route.
    assert preflight(home, LOCAL_ORIGIN, "GET", "/api/v1/logs").status_code == 204


def test_a_foreign_origin_gets_no_allow_origin_and_its_preflight_is_refused(home):
    response = raw(home, "GET", "/api/v1/health", headers={"Origin": EVIL_ORIGIN})
    assert response.status_code == 200  # the browser, not the server, withholds the answer
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Access-Control-Allow-Credentials" not in response.headers

    refused = preflight(home, EVIL_ORIGIN)
    assert refused.status_code == 403
    assert "Access-Control-Allow-Origin" not in refused.headers
    assert "Access-Control-Allow-Methods" not in refused.headers
    assert "error" in refused.json()

    # Look-alike hosts are not localhost.
    for origin in ("http://localhost.evil.example", "http://evil.example:5173", "null"):
        answered = raw(home, "GET", "/api/v1/health", headers={"Origin": origin})
        assert "Access-Control-Allow-Origin" not in answered.headers, origin


def test_the_cors_origins_setting_allows_a_configured_origin_at_once(home, cors_setting):
    changed = home.admin.put("/settings", {"http.corsOrigins": EVIL_ORIGIN})
    assert changed.status_code == 200 and changed.json()["changed"] == ["http.corsOrigins"]

    allowed = raw(home, "GET", "/api/v1/health", headers={"Origin": EVIL_ORIGIN})
    assert allowed.headers["Access-Control-Allow-Origin"] == EVIL_ORIGIN
    answered = preflight(home, EVIL_ORIGIN)
    assert answered.status_code == 204
    assert answered.headers["Access-Control-Allow-Origin"] == EVIL_ORIGIN
    # The configured list replaces the localhost default.
    assert "Access-Control-Allow-Origin" not in raw(home, "GET", "/api/v1/health", headers={"Origin": LOCAL_ORIGIN}).headers
    assert preflight(home, LOCAL_ORIGIN).status_code == 403

    # A comma list (trailing slashes ignored), then back to the default by deleting the setting.
    home.admin.put("/settings", {"http.corsOrigins": "https://app.example/, http://evil.example"})
    assert preflight(home, "https://app.example").status_code == 204
    assert preflight(home, EVIL_ORIGIN).status_code == 204
    assert preflight(home, "https://other.example").status_code == 403
    home.admin.put("/settings", {"http.corsOrigins": None})
    assert preflight(home, EVIL_ORIGIN).status_code == 403
    assert preflight(home, LOCAL_ORIGIN).status_code == 204


def test_the_wildcard_allows_any_origin(home, cors_setting):
    home.admin.put("/settings", {"http.corsOrigins": "*"})
    response = raw(home, "GET", "/api/v1/health", headers={"Origin": "https://anything.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "https://anything.example"


@pytest.mark.parametrize(
    "origin, configured, allowed",
    [
        ("http://localhost:5173", None, True),
        ("http://127.0.0.1", None, True),
        ("http://[::1]:8080", None, True),
        ("http://evil.example", None, False),
        ("http://localhost.evil.example", None, False),
        ("http://[bad", None, False),
        ("null", None, False),
        ("http://localhost:5173", "   ", True),  # a blank setting is no setting
        ("http://evil.example", "http://evil.example/", True),
        ("http://evil.example/", "http://evil.example", True),
        ("http://localhost:5173", "http://evil.example", False),
        ("http://evil.example:8080", "http://evil.example", False),
        ("https://x.example", " http://a.example , * ", True),
    ],
)
def test_origin_allowed(origin, configured, allowed):
    assert origin_allowed(origin, configured) is allowed
