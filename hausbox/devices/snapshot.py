"""The volatile device state (status, last seen, and every datum's value and times) in one small file.

Values change many times a minute and come back with the next message anyway: they do not belong
in the database, where each rewrite costs the rows, their WAL frames and a checkpoint on an SD card.
The device manager keeps them in memory and writes this snapshot every few minutes and at stop:

    <data dir>/device-state.json.gz   gzip of compact JSON:
    {"format": 1, "writtenAt": <ms>,
     "devices": {"<device id>": {"status": "online", "lastSeen": <ms or null>,
                                 "data": {"<datum key>": [<value>, <lastUpdated>, <lastChanged>]}}}}

Data are named by their key, not their id: a datum's id is derived from its device's id and its key
(``manager.stable_id``), and 4,000 random ids would triple the compressed size. A datum's times are
stored as milliseconds before its device's ``lastSeen`` (before ``writtenAt`` when the device has
none): most are 0 (the datum came with the device's last message), and small numbers compress well.

The file is replaced atomically (a temporary file in the same folder, fsync, rename, fsync of the
folder): a crash or power cut at any point leaves the previous snapshot or the new one, whole.
A missing, truncated, corrupt or unknown-format file is logged and ignored: values start unknown.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from hausbox.core.jsonenc import dumps

log = logging.getLogger("hausbox.device-state")

FILE_NAME = "device-state.json.gz"
FORMAT = 1
COMPRESS_LEVEL = 6  # 9 takes 3-5 times longer for 1-2 % less


@dataclass(slots=True)
class DeviceState:
    status: Any = None
    last_seen: int | None = None
    data: dict[str, tuple[Any, int | None, int | None]] = field(default_factory=dict)  # key -> (value, last updated, last changed)


def encode(devices: dict[str, DeviceState], written_at: int) -> bytes:
    """The snapshot's JSON (not yet compressed)."""
    out: dict[str, Any] = {}
    for device_id, state in devices.items():
        base = state.last_seen if state.last_seen is not None else written_at
        out[device_id] = {
            "status": state.status,
            "lastSeen": state.last_seen,
            "data": {key: [value, _before(base, updated), _before(base, changed)] for key, (value, updated, changed) in state.data.items()},
        }
    # Readings are storable by the time they are kept (core/values.py): orjson takes them all.
    return dumps({"format": FORMAT, "writtenAt": written_at, "devices": out})


def write(path: Path, body: bytes) -> int:
    """Compress ``body`` and replace the file at ``path`` atomically; return the bytes written."""
    compressed = gzip.compress(body, compresslevel=COMPRESS_LEVEL, mtime=0)
    temporary = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(compressed)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(folder)  # the rename itself survives a power cut
    finally:
        os.close(folder)
    return len(compressed)


def read(path: Path) -> dict[str, DeviceState] | None:
    """The snapshot's devices, or None (logged) when there is none or it cannot be used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        log.info("no device state snapshot (%s): device values start unknown", path.name)
        return None
    except OSError as error:
        log.warning("device state snapshot %s unreadable (%s): ignored, device values start unknown", path, error)
        return None
    try:
        text = gzip.decompress(raw)
        try:
            body = orjson.loads(text)
        except orjson.JSONDecodeError:
            body = json.loads(text)  # written by an older version, with integers beyond 64 bits
    except Exception as error:  # truncated, corrupt, not gzip, not JSON: never a reason not to start
        log.warning("device state snapshot %s is damaged (%s): ignored, device values start unknown", path, error)
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT or not isinstance(body.get("devices"), dict):
        found = body.get("format") if isinstance(body, dict) else None
        log.warning("device state snapshot %s has an unknown format (%r): ignored, device values start unknown", path, found)
        return None
    written_at = body.get("writtenAt")
    if not _is_int(written_at):
        written_at = 0
    devices: dict[str, DeviceState] = {}
    skipped = 0
    for device_id, entry in body["devices"].items():
        state = _device(entry, written_at)
        if state is None:
            skipped += 1
        else:
            devices[device_id] = state
    if skipped:
        log.warning("device state snapshot %s: %d malformed device entries ignored", path, skipped)
    return devices


def _device(entry: Any, written_at: int) -> DeviceState | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("data", {}), dict):
        return None
    last_seen = entry.get("lastSeen")
    if last_seen is not None and not _is_int(last_seen):
        return None
    base = last_seen if last_seen is not None else written_at
    data: dict[str, tuple[Any, int | None, int | None]] = {}
    for key, item in entry.get("data", {}).items():
        if not isinstance(item, list) or len(item) != 3 or not all(t is None or _is_int(t) for t in item[1:]):
            return None
        data[key] = (item[0], _after(base, item[1]), _after(base, item[2]))
    return DeviceState(entry.get("status"), last_seen, data)


def _before(base: int, stamp: int | None) -> int | None:
    return None if stamp is None else base - stamp


def _after(base: int, offset: int | None) -> int | None:
    return None if offset is None else base - offset


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
