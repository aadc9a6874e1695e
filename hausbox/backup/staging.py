"""A restore, validated completely by building it beside the live data: ``<data>/restore-staged/``.

The running engine keeps state in memory (device values, history points, settings) and writes it
back at stop, so restored files cannot replace the live ones while it runs. A restore is therefore
built in ``restore-staged.tmp/`` — a fresh main database made by the real migrations and filled in
one transaction with foreign keys checked, a fresh history store rebuilt from the CSV files, the
data files — then fsynced and renamed to ``restore-staged/`` (the commit point). The next start
moves it in (``apply.py``). Any problem: the staging folder is removed and the live data was never
touched.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import zipfile
from pathlib import Path
from typing import IO, Any, Iterable

from hausbox.backup import archive, tables
from hausbox.backup.crash import crash_point
from hausbox.core import database, secrets
from hausbox.core.components import Component
from hausbox.history import csvdump
from hausbox.history.store import FILE_NAME as HISTORY_FILE
from hausbox.history.store import JOURNAL_NAME
from hausbox.system.identity import MARKER_FILE  # the deployment's identity: never backed up, never restored
from hausbox.updater.state import sync_folder, write_json

log = logging.getLogger("hausbox.backup")

STAGED = "restore-staged"
STAGING = "restore-staged.tmp"  # being built: deleted at start (a kill -9 during validation)
REPLACED = "restore-staged.old"  # a staged restore another one replaces, deleted right after
MANIFEST = "manifest.json"  # written last: a staged folder without it is not a restore
MAIN_DB = "hausbox.db"
CSV_COVERED = (HISTORY_FILE, JOURNAL_NAME)  # the history goes as CSV, not as its files


def data_files(components: Iterable[Component]) -> set[str]:
    """The data files a backup holds: every component's ``backup_files`` (but the history's, which
    go as CSV) and secrets.json; never the instance marker."""
    files = {name for c in components for name in c.backup_files if name not in CSV_COVERED}
    return (files | {secrets.FILE_NAME}) - {MARKER_FILE}


def excluded_tables(components: Iterable[Component]) -> list[str]:
    return sorted({name for c in components for name in c.backup_excludes})


def check_payload(payload: Any) -> Any:
    """The ``tables`` of a backup document, after its version."""
    if not isinstance(payload, dict):
        raise tables.TableError("Invalid backup: the document must be an object")
    version = payload.get("version")
    if isinstance(version, bool) or version != archive.VERSION:
        raise tables.TableError(f"Invalid backup version: {str(version)[:40]} (this engine restores version {archive.VERSION})")
    if "tables" not in payload:
        raise tables.TableError("Invalid backup: tables is required")
    return payload["tables"]


class Staging:
    """One restore being built in ``<data>/restore-staged.tmp``."""

    def __init__(self, data_dir: Path, components: list[Component]):
        self.data_dir = data_dir
        self.folder = data_dir / STAGING
        self.components = components
        self.excluded = excluded_tables(components)
        self.files: list[str] = []

    def __enter__(self) -> "Staging":
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(mode=0o700)
        return self

    def __exit__(self, kind: Any, *_rest: Any) -> None:
        if kind is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def from_archive(self, zip_path: Path, restored_at: str) -> dict[str, Any]:
        allowed = data_files(self.components)
        zipped, entries = archive.open_archive(zip_path, allowed)
        with zipped:
            budget = archive.Budget()
            payload = archive.read_json_entry(zipped, entries[archive.JSON_ENTRY], budget)
            counts = self._tables(check_payload(payload))

            def history_entry(name: str) -> IO[bytes] | None:
                info = entries.get(archive.HISTORY_PREFIX + name)
                return archive.buffered(zipped, info, budget) if info is not None else None

            points = self._history(history_entry)
            files = []
            for name, info in entries.items():
                if name.startswith(archive.DATA_PREFIX):
                    relative = name[len(archive.DATA_PREFIX):]
                    target = self.folder / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "xb") as out:
                        os.fchmod(out.fileno(), 0o600)
                        archive.copy_entry(zipped, info, budget, out)
                    files.append(relative)
        return self._summary(restored_at, counts, points, sorted(files))

    def from_payload(self, payload: Any, restored_at: str) -> dict[str, Any]:
        counts = self._tables(check_payload(payload))
        points = self._history(lambda _name: None)  # no time series in a JSON backup: an empty store
        return self._summary(restored_at, counts, points, [])

    def _tables(self, rows: Any) -> dict[str, int]:
        path = self.folder / MAIN_DB
        database.migrate(path)
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            counts = tables.load(conn, rows, self.excluded)
            # One self-contained file, whatever journal it is moved in with: the engine sets WAL again.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            conn.close()
        return counts

    def _history(self, open_entry: Any) -> int:
        try:
            return csvdump.import_into(self.folder / HISTORY_FILE, open_entry)
        except zipfile.BadZipFile as error:
            raise archive.ArchiveError(f"history: {error}") from None

    def _summary(self, restored_at: str, counts: dict[str, int], points: int, files: list[str]) -> dict[str, Any]:
        self.files = files
        return {"success": True, "restoredAt": restored_at, "restartRequired": True, "tables": counts, "historyPoints": points, "filesRestored": len(files)}

    def commit(self, summary: dict[str, Any]) -> None:
        """Make the staged restore durable, then the one that the next start applies."""
        for folder, _dirs, names in os.walk(self.folder):
            for name in names:
                sync_folder(Path(folder) / name)  # fsync works on a file opened read-only too
        write_json(self.folder / MANIFEST, {**summary, "files": self.files})
        crash_point("restore-stage:built")
        staged, replaced = self.data_dir / STAGED, self.data_dir / REPLACED
        shutil.rmtree(replaced, ignore_errors=True)
        if staged.exists():
            os.rename(staged, replaced)  # atomically out of the way: never half a restore in STAGED
        os.rename(self.folder, staged)
        sync_folder(self.data_dir)
        shutil.rmtree(replaced, ignore_errors=True)
        log.info("restore staged (%s): applied at the next start", ", ".join(f"{n} {c}" for n, c in summary["tables"].items() if c))

