"""The REST calls the bench makes to build its home (few, so plain requests)."""

from __future__ import annotations

import json
import time
from typing import Any

import requests

PASSWORD = "bench-password-42"


class ApiError(RuntimeError):
    pass


class Api:
    def __init__(self, base_url: str, token: str | None = None):
        self.base_url = base_url + "/api/v1"
        self.token = token
        self.session = requests.Session()

    def call(self, method: str, path: str, body: Any = None, expect: tuple[int, ...] = (200, 201, 204)) -> Any:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        response = self.session.request(method, self.base_url + path, data=json.dumps(body) if body is not None else None, headers=headers, timeout=30)
        if response.status_code not in expect:
            raise ApiError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
        return response.json() if response.content else None

    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.call("POST", path, body)

    def put(self, path: str, body: Any) -> Any:
        return self.call("PUT", path, body)


def first_admin(base_url: str) -> tuple[Api, str]:
    """Set up the first administrator; returns an Api on a (non-expiring) API token, and the token."""
    pair = Api(base_url).post("/auth/setup", {"username": "bench", "password": PASSWORD, "displayName": "Bench"})
    admin = Api(base_url, pair["accessToken"])
    token = admin.post("/me/tokens", {"name": "bench"})["token"]
    return Api(base_url, token), token


def wait_until(predicate: Any, timeout: float, interval: float = 0.1, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"{what} not met within {timeout:.0f} s (last: {str(last)[:200]})")
