"""The install root: release folders and the ``current`` and ``previous`` links (see the package
docstring for the layout)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

from hausbox.updater.state import sync_folder

COMPLETE = ".complete"
VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?$")


def check_version(version: str) -> str:
    """A release version usable as a folder name; ValueError otherwise."""
    if not isinstance(version, str) or not VERSION.match(version) or ".." in version:
        raise ValueError(f"not a release version: {str(version)[:80]!r}")
    return version


def release_dir(root: Path, version: str) -> Path:
    return Path(root) / "releases" / check_version(version)


def is_complete(root: Path, version: str) -> bool:
    return (release_dir(root, version) / COMPLETE).is_file()


def mark_complete(root: Path, version: str) -> None:
    folder = release_dir(root, version)
    (folder / COMPLETE).write_text(version + "\n")
    sync_folder(folder)


def linked_version(root: Path, name: str = "current") -> str | None:
    """The version a link (``current`` or ``previous``) points at; None when it is missing."""
    link = Path(root) / name
    if not link.is_symlink():
        return None
    return Path(os.readlink(link)).name


def switch(root: Path, name: str, version: str) -> None:
    """Point the link ``name`` at ``releases/<version>`` atomically (new link, renamed over the old)."""
    root = Path(root)
    temporary = root / f".{name}.{uuid.uuid4().hex}"
    os.symlink(Path("releases") / check_version(version), temporary)  # relative: the root may move
    os.replace(temporary, root / name)
    sync_folder(root)


def remove_incomplete(root: Path, version: str) -> None:
    folder = release_dir(root, version)
    if folder.exists() and not is_complete(root, version):
        shutil.rmtree(folder)


def prune(root: Path) -> list[str]:
    """Remove every release but ``current`` and ``previous``; the versions removed."""
    keep = {linked_version(root, "current"), linked_version(root, "previous")}
    releases = Path(root) / "releases"
    removed = []
    for folder in sorted(releases.iterdir()) if releases.is_dir() else []:
        if folder.name not in keep and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed
