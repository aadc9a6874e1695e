"""The /ws handshake: a missing or bad token is closed with 4001 before any message; both token kinds are welcomed."""

from __future__ import annotations

import pytest

from hausbox import __version__
from tests.wsclient import connect, expect_welcome, read_frame


def assert_refused(ws, code: int = 4001) -> None:
    first = read_frame(ws, timeout=5)
    assert first.kind == "close", f"expected a close frame first, got {first}"
    assert first.code == code, f"close code {first.code!r}, reason {first.reason!r}"
    after = read_frame(ws, timeout=5)
    assert after.kind == "eof", f"nothing may follow the close frame, got {after}"


@pytest.mark.parametrize(
    "query",
    ["", "?token=", "?token=garbage", "?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", "?token=hbx_" + "0" * 64],
    ids=["no-token", "empty-token", "garbage", "forged-jwt", "unknown-api-token"],
)
def test_missing_or_invalid_token_is_closed_with_4001_and_no_welcome(home, query):
    import websocket

    ws = websocket.create_connection(home.server.ws_url + query, timeout=10)
    try:
        assert_refused(ws)
    finally:
        ws.shutdown()


def test_jwt_access_token_gets_the_welcome(home):
    ws = home.server.ws(home.admin_pair["accessToken"])
    try:
        welcome = expect_welcome(ws)
        assert set(welcome) == {"type", "message", "version"}
        assert isinstance(welcome["message"], str) and welcome["message"]
        assert welcome["version"] == __version__
    finally:
        ws.shutdown()


def test_api_token_gets_the_welcome_for_admin_and_standard(home):
    _, standard = home.new_user("standard")
    for api in (home.admin, standard):
        created = api.post("/me/tokens", {"name": "ws-test"})
        assert created.status_code == 201, created.text
        token = created.json()["token"]
        assert token.startswith("hbx_")
        ws = connect(home.server.ws_url, token)
        try:
            welcome = expect_welcome(ws)
            assert welcome["version"] == __version__ and welcome["message"]
        finally:
            ws.shutdown()


def test_refresh_token_is_not_an_access_credential(home):
    ws = connect(home.server.ws_url, home.admin_pair["refreshToken"])
    try:
        assert_refused(ws)
    finally:
        ws.shutdown()


# ---- the token as a subprotocol (browsers cannot set headers), and the Origin -------------------------
def _offer(home, token: str, **kwargs):
    import websocket

    return websocket.create_connection(home.server.ws_url, timeout=10, subprotocols=["hausbox", f"bearer.{token}"], **kwargs)


def test_a_token_offered_as_a_subprotocol_gets_the_welcome_and_is_not_echoed(home):
    created = home.admin.post("/me/tokens", {"name": "browser"})
    for token in (home.admin_pair["accessToken"], created.json()["token"]):
        ws = _offer(home, token)
        try:
            assert ws.getsubprotocol() == "hausbox"
            assert token not in str(ws.getheaders())
            expect_welcome(ws)
        finally:
            ws.shutdown()


def test_a_bad_token_offered_as_a_subprotocol_is_closed_with_4001(home):
    ws = _offer(home, "garbage")
    try:
        assert_refused(ws)
    finally:
        ws.shutdown()


@pytest.mark.parametrize("form", ["query", "subprotocol"])
def test_a_foreign_origin_is_closed_with_4003_before_the_welcome(home, form):
    import websocket

    token = home.admin_pair["accessToken"]
    if form == "query":
        ws = websocket.create_connection(f"{home.server.ws_url}?token={token}", timeout=10, origin="http://evil.example")
    else:
        ws = _offer(home, token, origin="http://evil.example")
    try:
        assert_refused(ws, code=4003)
    finally:
        ws.shutdown()


def test_the_box_own_pages_localhost_and_configured_origins_are_welcome(home):
    import websocket

    token = home.admin_pair["accessToken"]
    port = home.server.port
    allowed = [f"http://127.0.0.1:{port}", "http://localhost:5173"]
    for origin in allowed:
        ws = websocket.create_connection(f"{home.server.ws_url}?token={token}", timeout=10, origin=origin)
        try:
            expect_welcome(ws)
        finally:
            ws.shutdown()
    assert home.admin.put("/settings", {"http.corsOrigins": "https://console.example"}).status_code == 200
    try:
        ws = _offer(home, token, origin="https://console.example")
        try:
            expect_welcome(ws)
        finally:
            ws.shutdown()
        ws = _offer(home, token, origin="http://localhost:5173")  # the setting replaces the default
        try:
            assert_refused(ws, code=4003)
        finally:
            ws.shutdown()
    finally:
        home.admin.put("/settings", {"http.corsOrigins": None})
