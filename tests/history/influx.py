"""A real InfluxDB 1.x (Debian's ``influxdb`` package, ``make test-deps``) on loopback ports, for the export's tests.

Its own config, data directories and ports (never 8086); written to by the code under test and read
back here with InfluxDB's own ``/query`` API.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import requests

from tests.harness import dies_with_the_tests
from tools.benchlib.mosquitto import free_port

INFLUXD = shutil.which("influxd") or "/usr/bin/influxd"
ADMIN = ("admin", "s3cret pass")


def available() -> bool:
    return Path(INFLUXD).exists()


class Influxd:
    """``influxd -config <workdir>/influxdb.conf``; with ``auth``, an admin user ``ADMIN`` is made at start."""

    def __init__(self, workdir: Path, auth: bool = False):
        self.workdir = workdir
        self.auth = auth
        self.port = free_port()
        self.rpc_port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> "Influxd":
        w = self.workdir
        w.mkdir(parents=True, exist_ok=True)
        config = w / "influxdb.conf"
        config.write_text(
            f'reporting-disabled = true\nbind-address = "127.0.0.1:{self.rpc_port}"\n'
            f'[meta]\n  dir = "{w}/meta"\n'
            f'[data]\n  dir = "{w}/data"\n  wal-dir = "{w}/wal"\n  query-log-enabled = false\n'
            f'[http]\n  bind-address = "127.0.0.1:{self.port}"\n  log-enabled = false\n  auth-enabled = {str(self.auth).lower()}\n'
            "[monitor]\n  store-enabled = false\n"
        )
        log = open(w / "influxd.log", "ab")
        self.process = subprocess.Popen([INFLUXD, "-config", str(config)], stdout=log, stderr=log, stdin=subprocess.DEVNULL, preexec_fn=dies_with_the_tests)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/ping", timeout=0.5).status_code == 204:
                    break
            except requests.RequestException:
                if self.process.poll() is not None:
                    raise RuntimeError(f"influxd exited: {(w / 'influxd.log').read_text(errors='replace')[-2000:]}")
                time.sleep(0.05)
        else:
            raise RuntimeError("influxd did not start")
        if self.auth:
            # With no user yet, InfluxDB 1.x accepts exactly this statement without credentials.
            self.query(f"CREATE USER {ADMIN[0]} WITH PASSWORD '{ADMIN[1]}' WITH ALL PRIVILEGES", credentials=None)
        return self

    def stop(self) -> None:
        """Killed, as a server lost to a crash (what it acknowledged is in its WAL)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def query(self, q: str, db: str | None = None, credentials: tuple[str, str] | None = ADMIN) -> dict[str, Any]:
        params = {"q": q, "epoch": "ms", **({"db": db} if db else {})}
        response = requests.post(self.url + "/query", params=params, auth=credentials if self.auth else None, timeout=5)
        response.raise_for_status()
        result = response.json()["results"][0]
        if "error" in result:
            raise RuntimeError(result["error"])
        return result

    def create_database(self, name: str) -> None:
        self.query(f'CREATE DATABASE "{name}"')

    def rows(self, db: str, q: str = "SELECT * FROM equipment_data") -> list[dict[str, Any]]:
        """The rows of a query as dicts (column -> value), oldest first."""
        rows = []
        for series in self.query(q, db).get("series", []):
            rows += [dict(zip(series["columns"], values)) for values in series["values"]]
        return rows
