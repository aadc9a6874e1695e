"""The files the service and the helper share in ``<data-dir>/update/``, written atomically.

Shared by both sides: the service imports this module (standard library only) to write the job and
read the helper's state; the helper writes the state. ``state.json``::

    {"id", "kind": "update"|"restart", "pid", "startedAt", "step", "message",
     "done": bool, "ok": bool|null, "error": str|null,
     "steps": [{"step", "message", "at"}, ...]}
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

FOLDER = "update"
JOB = "job.json"
STATE = "state.json"
RUNNING_VERSION = "running-version.json"
LOG = "helper.log"
HELPER_MODULE = "hausbox.updater"
# What each kind of helper is called in messages and unit names (the spec's updater and restarter).
HELPER_NAMES = {"update": "updater", "restart": "restarter"}


def folder(data_dir: Path) -> Path:
    return Path(data_dir) / FOLDER


def iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` so that a reader (or a power cut) sees the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(value, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    sync_folder(path.parent)


def sync_folder(path: Path) -> None:
    """Make a rename in ``path`` durable (a power cut after it keeps it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when it is missing or unreadable."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def helper_alive(pid: Any) -> bool:
    """Whether ``pid`` is a live helper process (not a zombie, not a reused pid of something else)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return HELPER_MODULE.encode() in cmdline  # a zombie's command line is empty


def write_running_version(data_dir: Path, version: str) -> None:
    """Said by each service process at start: the helper's proof of which version serves."""
    write_json(folder(data_dir) / RUNNING_VERSION, {"version": version, "pid": os.getpid(), "startedAt": iso_now()})
