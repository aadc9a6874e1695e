"""A value is accepted only if it can be stored and encoded back (issue 10, "Values that poison reads").

Each sample of the issue is a 400 that changes nothing, over the real server, and the reads stay
whole after a restart; values stored before the check (written here into the database by hand)
no longer break a listing.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

BIG = 18446744073709551616  # 2^64: beyond orjson's range
LONE_SURROGATE = b'"\\ud800"'
READS = ["/me", "/users", "/charts", "/dashboard/widgets", "/settings", "/activity", "/zones", "/devices", "/equipments"]


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def raw_put(api, path: str, raw: bytes, method: str = "PUT"):
    return api.request(method, path, data=raw, headers={"Content-Type": "application/json"})


def assert_refused(response, *words: str) -> None:
    assert response.status_code == 400, f"{response.status_code}: {response.text[:300]}"
    message = response.json()["error"]
    assert all(word in message for word in words), message


def assert_reads_whole(api) -> None:
    for path in READS:
        response = api.get(path)
        assert response.status_code in (200, 403), f"GET {path}: {response.status_code} {response.text[:300]}"


@pytest.fixture
def served(make_server):
    from tests.harness import Home

    server = make_server()
    home = Home(server)
    _, standard = home.new_user()
    return server, home, standard


def test_each_sample_is_a_400_that_changes_nothing_even_after_a_restart(served):
    server, home, standard = served
    admin = home.admin
    preferences, zones = standard.get("/me").json()["preferences"], admin.get("/zones").json()
    assert_refused(standard.put("/me/preferences", {"preferences": {"theme": BIG}}), "preferences.theme", "integer")
    assert_refused(admin.put("/settings", {"ui.level": BIG}), "ui.level")
    assert_refused(admin.post("/charts", {"name": "Deep", "config": deep(300)}), "nested too deeply")
    assert_refused(admin.post("/charts", {"name": "Big", "config": {"max": BIG}}), "config.max")
    assert_refused(admin.post("/dashboard/widgets", {"type": "equipment", "config": {"size": -BIG}}), "config.size")
    assert_refused(admin.post("/zones", {"name": "Far", "displayOrder": 1099511627776}), "displayOrder")
    assert_refused(admin.post("/equipments/none/orders/state", {"value": BIG}), "value")
    assert_refused(raw_put(admin, "/me", b'{"displayName": ' + LONE_SURROGATE + b"}"), "displayName", "surrogate")
    assert_refused(raw_put(standard, "/me/preferences", b'{"preferences": {"x": NaN}}'))
    assert_refused(raw_put(admin, "/charts", b'{"name": "Inf", "config": {"y": 1e400}}', method="POST"), "finite")
    assert_refused(raw_put(admin, "/zones", b'{"name": "x", "icon": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", method="POST"), "nested")
    assert standard.get("/me").json()["preferences"] == preferences
    assert admin.get("/charts").json() == [] and admin.get("/dashboard/widgets").json() == []
    assert admin.get("/zones").json() == zones
    assert "ui.level" not in admin.get("/settings").json()
    assert_reads_whole(admin)
    assert_reads_whole(standard)
    server.restart()
    assert_reads_whole(admin)
    assert_reads_whole(standard)
    assert standard.get("/me").json()["preferences"] == preferences


def test_values_in_range_are_kept_exactly(served):
    _, home, standard = served
    largest, deepest = (1 << 63) - 1, deep(29)  # the body wraps it in two levels: 32 in all
    assert standard.put("/me/preferences", {"preferences": {"n": largest, "d": deepest, "t": "é\U0001f600"}}).status_code == 200
    assert standard.get("/me").json()["preferences"]["n"] == largest
    assert standard.get("/me").json()["preferences"]["d"] == deepest
    created = home.admin.post("/zones", {"name": "Near", "displayOrder": 2147483647})
    assert created.status_code == 201 and created.json()["displayOrder"] == 2147483647


def test_values_stored_before_the_check_do_not_break_the_lists(served):
    server, home, standard = served
    me = standard.get("/me").json()
    assert home.admin.post("/charts", {"name": "Old", "config": {}}).status_code == 201
    server.stop()
    with sqlite3.connect(server.data_dir / "hausbox.db") as db:
        db.execute("UPDATE users SET preferences = ? WHERE id = ?", (json.dumps({"theme": BIG}), me["id"]))
        db.execute("UPDATE chart_configs SET config = ?", (json.dumps(deep(300)),))
        db.execute("INSERT INTO settings (key, value, updated_at) VALUES ('ui.big', ?, 0)", (json.dumps(BIG),))
    server.start()
    assert_reads_whole(home.admin)
    assert_reads_whole(standard)
    assert standard.get("/me").json()["preferences"]["theme"] == str(BIG)  # shown as its text, not a 500
    assert home.admin.get("/settings").json()["ui.big"] == str(BIG)
