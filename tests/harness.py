"""Test harness: a real hausbox process on a loopback port, driven over real HTTP and WebSocket."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
import websocket

from tools.benchlib.mosquitto import free_port  # one way to pick a loopback port, shared with the broker

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1


def dies_with_the_tests() -> None:
    """``preexec_fn`` of the processes a test starts: SIGTERM when the test process dies, so a run
    killed midway (a timeout, Ctrl-C) leaves no server behind on a port (seven once outlived theirs).
    Safe here because tests start them from the main thread (the signal follows the starting thread)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
PASSWORD = "correct-horse-42"


class Api:
    """A small REST client bound to one server and, optionally, one bearer token."""

    def __init__(self, base_url: str, token: str | None = None):
        self.base_url = base_url
        self.token = token
        self.session = requests.Session()

    def as_token(self, token: str | None) -> "Api":
        return Api(self.base_url, token)

    def request(self, method: str, path: str, json_body: Any = None, data: Any = None, headers: dict | None = None, **kwargs: Any) -> requests.Response:
        headers = dict(headers or {})
        if self.token:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        if json_body is not None:
            data = json.dumps(json_body)
            headers.setdefault("Content-Type", "application/json")
        return self.session.request(method, self.base_url + "/api/v1" + path, data=data, headers=headers, timeout=30, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json_body: Any = None, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, json_body, **kwargs)

    def put(self, path: str, json_body: Any = None, **kwargs: Any) -> requests.Response:
        return self.request("PUT", path, json_body, **kwargs)

    def patch(self, path: str, json_body: Any = None, **kwargs: Any) -> requests.Response:
        return self.request("PATCH", path, json_body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("DELETE", path, **kwargs)


class Server:
    """``python -m hausbox serve`` in a subprocess with its own data directory and port.

    ``module`` runs another entry point instead (a test's wrapper around the real server).
    """

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None, module: str = "hausbox"):
        self.data_dir = data_dir
        self.module = module
        self.port = free_port()
        self.extra_env = env or {}
        self.process: subprocess.Popen | None = None
        self.log_path = data_dir.parent / f"{data_dir.name}-stderr.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 20.0) -> "Server":
        env = {
            **os.environ,
            "PORT": str(self.port),
            "HAUSBOX_BIND": "127.0.0.1",
            "HAUSBOX_DATA_DIR": str(self.data_dir),
            "HAUSBOX_MDNS": "0",
            "HAUSBOX_BCRYPT_ROUNDS": "4",
            "HAUSBOX_LOGIN_RATE": "1000",
            "HAUSBOX_STRICT_EVENTS": "1",  # every emitted payload checked against its declaration
            "LOG_LEVEL": "info",
            "TZ": "UTC",
            **self.extra_env,
        }
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", self.module, "serve"], cwd=ROOT, env=env, stdout=log, stderr=log, preexec_fn=dies_with_the_tests
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.output()}")
            try:
                if requests.get(self.url + "/api/v1/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"server did not answer within {timeout} s:\n{self.output()}")

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM, then wait for a clean exit; returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> "Server":
        self.stop()
        return self.start()

    def api(self, token: str | None = None) -> Api:
        return Api(self.url, token)

    def ws(self, token: str, **kwargs: Any) -> websocket.WebSocket:
        return websocket.create_connection(f"{self.ws_url}?token={token}", timeout=10, **kwargs)


class Home:
    """A started server with its first admin set up, plus helpers to get more users."""

    def __init__(self, server: Server):
        self.server = server
        pair = server.api().post("/auth/setup", {"username": "admin", "password": PASSWORD, "displayName": "Admin"}).json()
        self.admin_pair = pair
        self.admin = server.api(pair["accessToken"])
        self._users = 0

    def login(self, username: str, password: str = PASSWORD) -> dict[str, Any]:
        response = self.server.api().post("/auth/login", {"username": username, "password": password})
        assert response.status_code == 200, response.text
        return response.json()

    def new_user(self, role: str = "standard", password: str = PASSWORD) -> tuple[dict[str, Any], Api]:
        """Create a user through the API and sign them in: ``(user JSON, their Api)``."""
        self._users += 1
        username = f"{role}{self._users}-{os.getpid()}"
        created = self.admin.post("/users", {"username": username, "password": password, "displayName": username, "role": role})
        assert created.status_code == 201, created.text
        pair = self.login(username, password)
        return created.json(), self.server.api(pair["accessToken"])


def wait_for(predicate: Any, timeout: float = 5.0, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
