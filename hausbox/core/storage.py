"""The data directory: for the service's user only, and watched for free space.

A full SD card must not take the box down: writes are refused with 507 (nothing half-done: SQLite
rolls the transaction back), reads go on from memory and the database, and an alarm says so as
soon as space runs short, before a write fails, and again when it does.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import gevent

log = logging.getLogger("hausbox.storage")

LOW_SPACE_BYTES = 50 * 1024 * 1024  # below this free space, the alarm is raised
CHECK_EVERY_S = 60.0
ALARM_ID = "storage-low"
_FULL_MARKERS = ("database or disk is full", "no space left on device")


def secure_data_dir(path: Path) -> None:
    """Create the data directory if needed; make it and everything in it the owner's alone.

    Files the service creates afterwards inherit that through the process umask (``serve``)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(path):
        os.chmod(folder, 0o700)
        for name in files:
            try:
                os.chmod(os.path.join(folder, name), 0o600)
            except OSError:
                pass  # a file that vanished meanwhile (a rotated log)


def is_storage_full(error: BaseException) -> bool:
    """Whether an error (or what it wraps: Pony re-raises SQLite's) says the disk is full."""
    seen: set[int] = set()
    pending: list[Any] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(marker in str(current).lower() for marker in _FULL_MARKERS):
            return True
        pending += [current.__cause__, current.__context__, *(getattr(current, "exceptions", None) or [])]
    return False


class StorageWatch:
    """Raises the ``storage-low`` alarm while the data directory's free space is short."""

    def __init__(self, data_dir: Path, raise_alarm: Callable[..., bool], resolve_alarm: Callable[..., bool], low_bytes: int = LOW_SPACE_BYTES):
        self._data_dir = data_dir
        self._raise = raise_alarm
        self._resolve = resolve_alarm
        self._low = low_bytes
        self._timer: gevent.Greenlet | None = None

    def start(self) -> None:
        self.check()
        self._timer = gevent.spawn(self._loop)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.kill(block=False)
            self._timer = None

    def _loop(self) -> None:
        while True:
            gevent.sleep(CHECK_EVERY_S)
            self.check()

    def free_bytes(self) -> int | None:
        try:
            return shutil.disk_usage(self._data_dir).free
        except OSError:
            return None

    def check(self) -> None:
        free = self.free_bytes()
        if free is None:
            return
        if free < self._low:
            self._raise(ALARM_ID, "error", "storage", f"Storage almost full: {free // (1024 * 1024)} MB free in {self._data_dir}")
        else:
            self._resolve(ALARM_ID, f"Storage space is back: {free // (1024 * 1024)} MB free")

    def write_failed(self) -> None:
        """A write was refused for want of space: say so at once, whatever the last check found."""
        free = self.free_bytes()
        self._raise(ALARM_ID, "error", "storage", f"Storage full: a write was refused ({(free or 0) // 1024} KB free in {self._data_dir})")
