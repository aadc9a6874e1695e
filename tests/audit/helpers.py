"""What the audit tests share: reading /audit in process, and the batch delay passing.

The homes start the audit component only (``services=["audit"]``: its start stage, retention),
not the whole engine: the other components' start stages schedule outside work (a release feed
polled 10 s after start) that a test moving the clock by days would wait for."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from hausbox.audit.trail import FLUSH_DELAY_S
from tests.harness import PASSWORD

START = "2026-06-15 08:00"


def page(house, **params: Any) -> dict[str, Any]:
    status, _, body = house.api("GET", "/audit" + ("?" + urlencode(params) if params else ""))
    assert status == 200, body
    return json.loads(body)


def entries(house, **params: Any) -> list[dict[str, Any]]:
    return page(house, limit=500, **params)["entries"]


def written(house) -> None:
    """Let the batch delay pass (on the house's ManualClock): the worker writes what is buffered."""
    house.advance(FLUSH_DELAY_S)


def user_token(house, username: str, role: str = "standard") -> tuple[str, str]:
    """A new user's ``(id, access token)``."""
    auth = house.engine.auth
    user = auth.users.create(username, PASSWORD, username.title(), role)
    return user["id"], auth.login(username, PASSWORD)["accessToken"]
