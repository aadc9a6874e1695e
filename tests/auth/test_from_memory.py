"""Authenticated reads are answered from memory: checking a credential (an access token or an API
token) and reading profiles touch no database, and every change still takes effect at once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pony.orm import core as pony_core

READS = ("/me", "/users", "/zones", "/zones/aggregation", "/equipments", "/devices", "/modes", "/health")


@pytest.fixture
def statements(monkeypatch) -> list[str]:
    """Every SQL statement Pony runs while the test reads (its debug hook sees each one)."""
    seen: list[str] = []
    monkeypatch.setattr(pony_core, "log_sql", lambda sql, arguments=None: seen.append(sql))
    return seen


def _get(house: Any, path: str, token: str) -> dict[str, Any]:
    status, _, body = house.api("GET", path, token=token)
    assert status == 200, (path, body)
    return json.loads(body)


def test_authenticated_reads_run_no_sql(house, statements):
    access = house.token()
    api_token = json.loads(house.api("POST", "/me/tokens", {"name": "script"})[2])["token"]
    for token in (access, api_token):  # the first use of an API token records it (once a minute)
        _get(house, "/me", token)
    pony_core.set_sql_debug(True)
    try:
        for token in (access, api_token):
            for path in READS:
                _get(house, path, token)
    finally:
        pony_core.set_sql_debug(False)
    assert statements == []


def test_profile_changes_show_at_once_in_the_reads(house):
    token = house.token()
    status, _, _ = house.api("PUT", "/me", {"displayName": "Alice"})
    assert status == 200
    status, _, _ = house.api("PUT", "/me/preferences", {"preferences": {"theme": "dark"}})
    assert status == 200
    me = _get(house, "/me", token)
    assert me["displayName"] == "Alice" and me["preferences"]["theme"] == "dark"
    created = json.loads(house.api("POST", "/users", {"username": "bob", "password": "correct-horse-43", "displayName": "Bob", "role": "standard"})[2])
    listed = {u["username"]: u for u in _get(house, "/users", token)}
    assert listed["bob"] == created and listed["admin"]["displayName"] == "Alice"
    house.api("PUT", f"/users/{created['id']}", {"enabled": False})
    assert {u["username"]: u for u in _get(house, "/users", token)}["bob"]["enabled"] is False
    # a profile handed out cannot change the view
    me["preferences"]["theme"] = "changed by a caller"
    assert _get(house, "/me", token)["preferences"]["theme"] == "dark"
