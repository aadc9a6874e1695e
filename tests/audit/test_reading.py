"""GET /audit: newest first, the cursor, the filters, the 400s and the admin-only read."""

from __future__ import annotations

import json

import pytest

from hausbox.core.clock import iso_utc
from tests.audit.helpers import START, entries, page, user_token, written
from tests.inprocess import local_ms

T0 = local_ms(START)


@pytest.fixture
def home(make_house):
    house = make_house(start=START, services=["audit"])  # not the whole engine: see helpers.py
    house.token()
    return house


def _bad_zones(home, count: int, token: str | None = None) -> None:
    """``count`` refused creations (400: no name), which change nothing but the audit trail."""
    for _ in range(count):
        assert home.api("POST", "/zones", {}, token=token)[0] == 400


def test_pages_walk_every_entry_once_while_new_ones_arrive(home):
    for _ in range(5):  # runs of entries sharing one ts: the id breaks the tie
        _bad_zones(home, 30)
        home.advance(1)
    before = [e["id"] for e in entries(home)]
    assert len(before) == 150 and before == sorted(before, reverse=True)
    seen: list[int] = []
    cursor = None
    while True:
        body = page(home, limit=17, **({"cursor": cursor} if cursor else {}))
        seen += [e["id"] for e in body["entries"]]
        stamps = [(e["ts"], e["id"]) for e in body["entries"]]
        assert stamps == sorted(stamps, reverse=True)
        cursor = body["nextCursor"]
        if cursor is None:
            break
        _bad_zones(home, 3)  # newer entries while the walk goes on: they come before the cursor
        written(home)
    assert seen == before  # each once, in order, none of the new ones
    assert len(entries(home)) == 150 + 3 * (len(before) // 17)


def test_the_last_page_has_no_cursor_and_an_empty_trail_is_one_empty_page(home):
    assert page(home) == {"entries": [], "nextCursor": None}
    _bad_zones(home, 4)
    written(home)
    first = page(home, limit=2)
    assert len(first["entries"]) == 2 and first["nextCursor"]
    last = page(home, limit=2, cursor=first["nextCursor"])
    assert len(last["entries"]) == 2 and last["nextCursor"] is None
    assert len(page(home)["entries"]) == 4  # the default limit


def test_filters(home):
    bob_id, bob = user_token(home, "bob")
    _bad_zones(home, 2)  # admin: failure
    home.advance(10)
    assert home.api("POST", "/zones", {"name": "Salon"}, token=bob)[0] == 403
    assert home.api("PUT", "/me", {"displayName": "Bobby"}, token=bob)[0] == 200
    home.advance(10)
    assert home.api("DELETE", "/zones/nope")[0] == 404
    written(home)
    actions = lambda **f: [e["action"] for e in entries(home, **f)]  # noqa: E731
    assert actions(user="bob") == ["PUT /me", "POST /zones"]
    assert actions(user=bob_id) == ["PUT /me", "POST /zones"]
    assert actions(user="admin") == ["DELETE /zones/*", "POST /zones", "POST /zones"]
    assert actions(action="PUT /me") == ["PUT /me"]
    assert actions(outcome="denied") == ["POST /zones"]
    assert actions(outcome="success") == ["PUT /me"]
    assert actions(method="delete") == ["DELETE /zones/*"]
    assert actions(**{"from": T0 + 10_000}) == ["DELETE /zones/*", "PUT /me", "POST /zones"]
    assert actions(**{"from": iso_utc(T0 + 10_000), "to": iso_utc(T0 + 20_000)}) == ["PUT /me", "POST /zones"]
    assert actions(to=T0 + 10_000) == ["POST /zones", "POST /zones"]
    assert actions(user="bob", outcome="success", method="PUT") == ["PUT /me"]
    assert actions(user="nobody") == []


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=501", "limit=ten", "cursor=%21%21", "cursor=bm9wZQ", "outcome=fine", "method=GET", "from=yesterday", "to=2026-13-01",
     "from=99999999999999999999", "cursor=OTk5OTk5OTk5OTk5OTk5OTk5OTkuMQ"],
)
def test_a_bad_query_is_a_400(home, query):
    status, _, body = home.api("GET", "/audit?" + query)
    assert status == 400 and "error" in json.loads(body)


def test_a_standard_user_may_not_read_the_trail(home):
    _, bob = user_token(home, "bob")
    status, _, body = home.api("GET", "/audit", token=bob)
    assert status == 403 and "error" in json.loads(body)
    assert home.api("GET", "/audit")[0] == 200
