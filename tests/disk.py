"""A real small disk for full-disk scenarios: a tmpfs of a few megabytes, filled to the last byte.

A fake that raises ENOSPC cannot fail the way a full file system does (a short write, a journal
that cannot grow, SQLite's own rollback journal refused), so these tests fill a real one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import pytest


def mounted_small_disk(mount_point: Path, size: str = "8m") -> Iterator[Path]:
    """Mount a tmpfs of ``size`` at ``mount_point`` for the duration (skips where mounting is refused)."""
    mount_point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def fill(disk: Path) -> Path:
    """Write a file until the disk refuses another byte; delete it to make room again."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:  # unbuffered: nothing left over for close to fail on
        for block in (65536, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * block)
            except OSError:
                pass
    return filler
