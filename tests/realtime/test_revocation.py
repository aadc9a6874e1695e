"""A socket whose credential is revoked is closed with 4001; the user's other credentials keep theirs."""

from __future__ import annotations

import time

from tests.wsclient import (
    Collector,
    expect_welcome,
    read_frame,
    settings_events_with,
)

REVOKE_DEADLINE_S = 6.5  # revalidation runs every 5 s even when no auth.revoked is emitted


def open_collector(home, token: str) -> Collector:
    ws = home.server.ws(token)
    expect_welcome(ws)
    return Collector(ws)


def assert_closed_for_credentials(collector: Collector, since: float) -> None:
    end = collector.wait_end(REVOKE_DEADLINE_S)
    assert end.kind == "close", f"expected a close frame, got {end}"
    assert end.code == 4001, f"close code {end.code!r} ({end.reason!r})"
    assert end.at - since < REVOKE_DEADLINE_S


def test_disabling_a_user_closes_their_sockets(home):
    user, api = home.new_user("standard")
    created = api.post("/me/tokens", {"name": "dash"})
    assert created.status_code == 201, created.text
    by_jwt = open_collector(home, api.token)
    by_api_token = open_collector(home, created.json()["token"])
    bystander = open_collector(home, home.new_user("standard")[1].token)
    try:
        started = time.monotonic()
        response = home.admin.put(f"/users/{user['id']}", {"enabled": False})
        assert response.status_code == 200, response.text
        assert_closed_for_credentials(by_jwt, started)
        assert_closed_for_credentials(by_api_token, started)
        # Nobody else is touched: another user still gets events.
        key = f"ws.revoke.bystander.{time.monotonic_ns()}"
        assert home.admin.put("/settings", {key: 1}).status_code == 200
        bystander.wait_for(lambda c: settings_events_with(c, key), timeout=2)
        assert bystander.end() is None
        # And a disabled user cannot come back.
        again = home.server.ws(api.token)
        try:
            first = read_frame(again)
            assert first.kind == "close" and first.code == 4001, first
        finally:
            again.shutdown()
    finally:
        for collector in (by_jwt, by_api_token, bystander):
            collector.close()


def test_deleting_the_api_token_closes_only_the_socket_that_used_it(home):
    _, api = home.new_user("standard")
    created = api.post("/me/tokens", {"name": "kiosk"}).json()
    kept = api.post("/me/tokens", {"name": "other"}).json()
    by_token = open_collector(home, created["token"])
    by_other_token = open_collector(home, kept["token"])
    by_jwt = open_collector(home, api.token)
    try:
        started = time.monotonic()
        response = api.delete(f"/me/tokens/{created['id']}")
        assert response.status_code == 204, response.text
        assert_closed_for_credentials(by_token, started)
        key = f"ws.revoke.token.{time.monotonic_ns()}"
        assert home.admin.put("/settings", {key: 1}).status_code == 200
        for survivor in (by_other_token, by_jwt):
            survivor.wait_for(lambda c: settings_events_with(c, key), timeout=2)
            assert survivor.end() is None
    finally:
        for collector in (by_token, by_other_token, by_jwt):
            collector.close()
