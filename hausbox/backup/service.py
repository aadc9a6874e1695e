"""Backups: the export (a ZIP, or JSON without history), restores staged for the next start, and
the local backups taken before an update.

An export is a consistent snapshot: every component first writes what it keeps in memory (the
engine's checkpoint: device values, activity items, the history writer's points); the main
database is then copied with SQLite's backup API (one step: one read transaction), the history
store likewise from inside the history worker (no tier job writes meanwhile). The ZIP is
then built from the copies in a thread (the event loop keeps serving), in a folder under the data
directory, and streamed from an unlinked file: nothing is left behind.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Callable

from gevent.lock import Semaphore

from hausbox import __version__
from hausbox.backup import archive, staging, tables
from hausbox.backup.staging import Staging
from hausbox.core.errors import BadRequest, Conflict
from hausbox.core.workers import in_thread
from hausbox.history import csvdump
from hausbox.updater.state import sync_folder

log = logging.getLogger("hausbox.backup")

LOCAL_DIR = "backups"
LOCAL_KEEP = 3
WORK_PREFIX = "backup-work-"  # an export's or an upload's folder; leftovers are removed at start
MAX_UPLOAD_BYTES = 512 << 20
_VERSION = re.compile(r"^[0-9A-Za-z.+-]{1,64}$")


def iso_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sqlite_copy(source: Path, target: Path) -> None:
    """A consistent copy of a live SQLite file (the backup API in one step)."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    dst = sqlite3.connect(str(target))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


class Backups:
    def __init__(self, engine: Any):
        self._engine = engine
        self.data_dir: Path = engine.config.data_dir
        self.local_dir = self.data_dir / LOCAL_DIR
        self._restoring = Semaphore()
        for leftover in self.data_dir.glob(WORK_PREFIX + "*"):
            shutil.rmtree(leftover, ignore_errors=True)  # an export or upload a kill -9 interrupted

    # ---- export --------------------------------------------------------------------------------
    def work_dir(self) -> Path:
        return Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=self.data_dir))

    def export(self, work: Path, zip_always: bool = False) -> Path | dict[str, Any]:
        """A backup built in ``work``: the ZIP's path, or the JSON document when there is no
        history at all (unless ``zip_always``)."""
        self._engine.checkpoint()  # what components keep in memory, on disk first (or a 503)
        in_thread(_sqlite_copy, self.data_dir / staging.MAIN_DB, work / staging.MAIN_DB)
        history = self._engine.history.store.path  # copied in its worker: no tier job writes meanwhile
        self._engine.workers.get("history").run_and_wait(lambda: in_thread(_sqlite_copy, history, work / staging.HISTORY_FILE))
        excluded = staging.excluded_tables(self._engine.components)
        document = {"version": archive.VERSION, "exportedAt": iso_now(), "engineVersion": __version__}
        files = sorted(staging.data_files(self._engine.components))
        return in_thread(_build, work, document, excluded, self.data_dir, files, zip_always)

    # ---- restore -------------------------------------------------------------------------------
    def restore_archive(self, zip_path: Path) -> dict[str, Any]:
        return self._restore(lambda stage, now: stage.from_archive(zip_path, now))

    def restore_payload(self, payload: Any) -> dict[str, Any]:
        return self._restore(lambda stage, now: stage.from_payload(payload, now))

    def _restore(self, build: Callable[[Staging, str], dict[str, Any]]) -> dict[str, Any]:
        if not self._restoring.acquire(blocking=False):
            raise Conflict("A restore is already being prepared")
        try:
            def run() -> dict[str, Any]:
                try:
                    with Staging(self.data_dir, self._engine.components) as stage:
                        summary = build(stage, iso_now())
                        stage.commit(summary)
                        return summary
                except (archive.ArchiveError, tables.TableError, csvdump.CsvError) as error:
                    raise BadRequest(str(error)) from None

            summary = in_thread(run)
        finally:
            self._restoring.release()
        log.warning("restore staged: %s", json.dumps(summary["tables"]))
        return summary

    def restore_local(self, filename: Any) -> dict[str, Any]:
        return self.restore_archive(self._local_file(filename))

    def _local_file(self, filename: Any) -> Path:
        if not isinstance(filename, str) or not filename or "/" in filename or "\\" in filename or ".." in filename or "\x00" in filename:
            raise BadRequest("Invalid filename: a local backup's name, without a path")
        # Only a name the listing shows: nothing the caller types reaches the file system (a name
        # longer than the file system allows was a 500).
        path = next((p for p in self._local_files() if p.name == filename), None)
        if path is None:
            raise BadRequest(f"Backup file not found: {filename[:200]}")
        return path

    # ---- local backups -------------------------------------------------------------------------
    def create_local(self, target_version: str) -> Path:
        """A full backup (always a ZIP) in ``<data>/backups``, named for the update to
        ``target_version``; only the newest ``LOCAL_KEEP`` are kept. Returns its path."""
        if not _VERSION.match(target_version or ""):
            raise ValueError(f"not a version: {target_version!r}")
        self.local_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.local_dir, 0o700)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S")
        target = self.local_dir / f"hausbox-backup-pre-v{target_version}-{stamp}.zip"
        work = self.work_dir()
        try:
            built = self.export(work, zip_always=True)
            assert isinstance(built, Path)
            os.replace(built, target)  # same file system: atomic
            sync_folder(self.local_dir)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for old in self._local_files()[LOCAL_KEEP:]:
            old.unlink(missing_ok=True)
        log.info("local backup %s written", target.name)
        return target

    def _local_files(self) -> list[Path]:
        """The local backups, newest first."""
        if not self.local_dir.is_dir():
            return []
        files = [p for p in self.local_dir.iterdir() if p.suffix == ".zip" and p.is_file() and not p.is_symlink()]
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True)

    def list_local(self) -> list[dict[str, Any]]:
        return [
            {"filename": p.name, "size": p.stat().st_size, "createdAt": datetime.fromtimestamp(p.stat().st_mtime, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")}
            for p in self._local_files()
        ]


def _build(work: Path, document: dict[str, Any], excluded: list[str], data_dir: Path, files: list[str], zip_always: bool) -> Path | dict[str, Any]:
    document["tables"] = tables.export(work / staging.MAIN_DB, excluded)
    history = work / staging.HISTORY_FILE
    if not zip_always and csvdump.is_empty(history):
        return {"version": document["version"], "exportedAt": document["exportedAt"], "tables": document["tables"]}
    target = work / "backup.zip"
    with zipfile.ZipFile(target, "x", zipfile.ZIP_DEFLATED, compresslevel=6) as out:
        out.writestr(archive.JSON_ENTRY, json.dumps(document, separators=(",", ":")))

        def entry(name: str) -> IO[bytes]:
            return out.open(archive.HISTORY_PREFIX + name, "w", force_zip64=True)

        csvdump.export(history, entry)
        for name in files:
            source = data_dir / name
            if source.is_file() and not source.is_symlink():
                out.write(source, archive.DATA_PREFIX + name)
    with open(target, "rb+") as written:
        os.fsync(written.fileno())
    return target

