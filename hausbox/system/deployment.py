"""What this machine is, for ``GET /system/version``: a docker socket here, a compose-managed container.

``dockerAvailable``: ``/var/run/docker.sock`` exists and is a socket (digest §13).
``composeManaged``: this process runs in a container (``/.dockerenv``) whose own labels, read from
the docker socket, carry the compose project's working dir, project and service (all three, as the
digest's detection). Not in a container, or no socket: false without asking anything.
"""

from __future__ import annotations

import http.client
import json
import socket
import stat
from pathlib import Path

DOCKER_SOCKET = Path("/var/run/docker.sock")
COMPOSE_LABELS = ("com.docker.compose.project.working_dir", "com.docker.compose.project", "com.docker.compose.service")


def docker_available(path: Path = DOCKER_SOCKET) -> bool:
    try:
        return stat.S_ISSOCK(path.stat().st_mode)
    except OSError:
        return False


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("localhost", timeout=2)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(2)
        self.sock.connect(self._path)


def compose_managed(path: Path = DOCKER_SOCKET) -> bool:
    if not Path("/.dockerenv").exists() or not docker_available(path):
        return False
    connection = _UnixConnection(str(path))
    try:
        connection.request("GET", f"/containers/{socket.gethostname()}/json")
        response = connection.getresponse()
        if response.status != 200:
            return False
        labels = json.loads(response.read()).get("Config", {}).get("Labels") or {}
    except (OSError, ValueError, http.client.HTTPException):
        return False
    finally:
        connection.close()
    return all(labels.get(label) for label in COMPOSE_LABELS)


def describe() -> dict[str, bool]:
    """Read once at start: neither changes while the process runs."""
    return {"dockerAvailable": docker_available(), "composeManaged": compose_managed()}

