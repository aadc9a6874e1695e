"""A staged restore moved in at start, before the database opens (one call in ``Engine.__init__``).

Renames only, in phases recorded in ``restore-staged/plan.json`` so that a kill -9 anywhere
completes the restore at the next start, never a mix of old and new:

1. plan (no plan file yet): ``restore-previous/`` emptied (the previous restore's leftovers), the
   live rows of the ``backup_excludes`` tables copied into the staged database (a restore leaves
   them as they are, rows written up to this start included), the plan written: phase ``aside``
   with the list of items. Killed before the plan is written: this step runs again.
2. ``aside``: each item (the main database and its -wal/-shm/-journal, the history store and its
   journal, each component's backup files, secrets.json when the backup holds one, and
   ``plugins/``, whose plugins are fetched again from the restored table) renamed into
   ``restore-previous/``; an item already gone was moved by a killed run. Then phase ``in``.
3. ``in``: each staged file renamed into the data directory; one already gone was moved. Then the
   staged folder is renamed away and deleted.

The instance marker, logs, local backups and the export queue are never items. What was replaced
stays in ``restore-previous/`` until the next restore, for inspection.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Iterable

from hausbox.backup import staging, tables
from hausbox.backup.crash import crash_point
from hausbox.core import secrets
from hausbox.core.components import Component
from hausbox.updater.state import sync_folder, write_json

log = logging.getLogger("hausbox.backup")

PREVIOUS = "restore-previous"
APPLIED = "restore-staged.done"  # renamed away at the end, then deleted
PLAN = "plan.json"
PLUGINS_DIR = "plugins"
SQLITE_SIDES = ("", "-wal", "-shm", "-journal")


def _items(staged: Path, components: Iterable[Component]) -> list[str]:
    names = [db + side for db in (staging.MAIN_DB, staging.HISTORY_FILE) for side in SQLITE_SIDES]
    names += [name for c in components for name in c.backup_files if name != staging.MARKER_FILE]
    if (staged / secrets.FILE_NAME).exists():
        names.append(secrets.FILE_NAME)  # a JSON backup has none: the current secrets stay
    names.append(PLUGINS_DIR)
    return list(dict.fromkeys(n for n in names if n != staging.MARKER_FILE))


def _incoming(staged: Path) -> list[str]:
    return sorted(entry.name for entry in staged.iterdir() if entry.name not in (PLAN, staging.MANIFEST))


def _read_plan(staged: Path) -> dict[str, Any] | None:
    try:
        return json.loads((staged / PLAN).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def apply_staged(data_dir: Path, components: list[Component]) -> bool:
    """Apply the staged restore, if there is one; returns whether one was applied."""
    for leftover in (staging.STAGING, staging.REPLACED, APPLIED):
        if (data_dir / leftover).exists():
            shutil.rmtree(data_dir / leftover, ignore_errors=True)  # never committed, or already applied
    staged = data_dir / staging.STAGED
    if not staged.is_dir():
        return False
    if not (staged / staging.MANIFEST).is_file():
        log.error("restore: %s has no %s (not a committed restore): removed", staged, staging.MANIFEST)
        shutil.rmtree(staged, ignore_errors=True)
        return False
    previous = data_dir / PREVIOUS
    plan = _read_plan(staged)
    if plan is None:
        shutil.rmtree(previous, ignore_errors=True)
        previous.mkdir(mode=0o700)
        _keep_excluded(data_dir, staged, components)
        plan = {"phase": "aside", "items": _items(staged, components), "incoming": _incoming(staged)}
        write_json(staged / PLAN, plan)
        crash_point("restore-apply:planned")
    if plan["phase"] == "aside":
        for name in plan["items"]:
            source = data_dir / name
            if source.exists() or source.is_symlink():
                (previous / name).parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, previous / name)
                crash_point("restore-apply:aside")
        sync_folder(data_dir)
        sync_folder(previous)
        plan["phase"] = "in"
        write_json(staged / PLAN, plan)
        crash_point("restore-apply:aside-done")
    for name in plan["incoming"]:
        source = staged / name
        if source.exists():
            os.rename(source, data_dir / name)
            crash_point("restore-apply:in")
    sync_folder(data_dir)
    summary = json.loads((staged / staging.MANIFEST).read_text(encoding="utf-8"))
    os.rename(staged, data_dir / APPLIED)
    sync_folder(data_dir)
    crash_point("restore-apply:done")
    shutil.rmtree(data_dir / APPLIED, ignore_errors=True)
    log.warning("restore of %s applied (the replaced files are in %s)", summary.get("restoredAt"), previous)
    return True


def _keep_excluded(data_dir: Path, staged: Path, components: list[Component]) -> None:
    excluded = staging.excluded_tables(components)
    if not excluded or not (staged / staging.MAIN_DB).exists():
        return
    conn = sqlite3.connect(str(staged / staging.MAIN_DB), isolation_level=None, uri=True)
    try:
        copied = tables.keep_excluded(conn, data_dir / staging.MAIN_DB, excluded)
        log.info("restore: %d row(s) of %s kept from the live database", copied, ", ".join(excluded))
    except sqlite3.Error:
        # The rows are still in restore-previous/; the restore itself must not be blocked by them.
        log.exception("restore: the rows of %s could not be kept (they stay in %s)", ", ".join(excluded), PREVIOUS)
    finally:
        conn.close()
