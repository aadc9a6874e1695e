"""The backup ZIP: its entries, and an uploaded one opened safely.

Entries:
    hausbox-backup.json   {"version": 1, "exportedAt", "engineVersion", "tables": {...}}
    history/<file>.csv    the history store (``hausbox.history.csvdump``)
    data/<file>           each data file a component declares (``backup_files``) and secrets.json

Nothing else is accepted in an archive to restore: an entry whose name is absolute, has ``..``, a
backslash, is a link, or is not one of those names is refused, as are more than ``MAX_ENTRIES``
entries, an entry above its bound and a total above ``MAX_UNCOMPRESSED`` (counted while reading,
not trusted from the headers: a zip bomb can lie there).
"""

from __future__ import annotations

import io
import json
import stat
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from hausbox.history import csvdump

JSON_ENTRY = "hausbox-backup.json"
HISTORY_PREFIX = "history/"
DATA_PREFIX = "data/"
VERSION = 1
MAX_ENTRIES = 100
MAX_JSON_BYTES = 256 << 20
MAX_UNCOMPRESSED = 4 << 30  # the history of a big home over ten years is well below this


class ArchiveError(ValueError):
    """An archive that cannot be restored; the message says why."""


class Budget:
    """The bytes an archive may still unpack, shared by all its entries."""

    def __init__(self, total: int = MAX_UNCOMPRESSED):
        self.left = total

    def take(self, count: int, name: str) -> None:
        self.left -= count
        if self.left < 0:
            raise ArchiveError(f"The archive unpacks to more than {MAX_UNCOMPRESSED >> 20} MB (at {name})")


class BoundedReader(io.RawIOBase):
    """A zip entry read with its bytes counted against the budget and its declared size."""

    def __init__(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget, limit: int | None = None):
        super().__init__()
        self._raw = archive.open(info)
        self._name = info.filename
        self._budget = budget
        self._limit = info.file_size if limit is None else min(limit, info.file_size)
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            chunk = self._raw.read(min(len(buffer), 1 << 16))
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error) as error:  # CRC, truncated, bad deflate
            raise ArchiveError(f"{self._name}: {error}") from None
        self._read += len(chunk)
        if self._read > self._limit:
            raise ArchiveError(f"{self._name}: larger than its bound or its declared size")
        self._budget.take(len(chunk), self._name)
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def buffered(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> io.BufferedReader:
    return io.BufferedReader(BoundedReader(archive, info, budget), 1 << 16)


def check_entry_name(name: str, data_files: set[str]) -> None:
    """An entry name this archive format has, and nothing that could leave the staging folder."""
    if name.startswith("/") or "\\" in name or ".." in name.split("/") or ":" in name or "\x00" in name:
        raise ArchiveError(f"Unsafe path in the archive: {name[:200]}")
    if name == JSON_ENTRY or name in (HISTORY_PREFIX + n for n in csvdump.NAMES):
        return
    if name.startswith(DATA_PREFIX) and name[len(DATA_PREFIX):] in data_files:
        return
    raise ArchiveError(f"Unexpected entry in the archive: {name[:200]}")


def open_archive(path: Path, data_files: set[str]) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """The ZIP at ``path`` and its entries by name, every name and kind checked."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise ArchiveError(f"Not a valid ZIP archive: {error}") from None
    try:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ArchiveError(f"The archive has {len(infos)} entries (at most {MAX_ENTRIES})")
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"Link in the archive: {info.filename[:200]}")
            if info.is_dir():
                raise ArchiveError(f"Unexpected entry in the archive: {info.filename[:200]}")
            check_entry_name(info.filename, data_files)
            if info.filename in entries:
                raise ArchiveError(f"Entry twice in the archive: {info.filename[:200]}")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"Encrypted entry in the archive: {info.filename[:200]}")
            entries[info.filename] = info
        if JSON_ENTRY not in entries:
            raise ArchiveError(f"ZIP missing {JSON_ENTRY}")
        return archive, entries
    except BaseException:
        archive.close()
        raise


def read_json_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> Any:
    with BoundedReader(archive, info, budget, MAX_JSON_BYTES) as reader:
        data = reader.readall()
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ArchiveError(f"Invalid JSON in {JSON_ENTRY}: {str(error)[:200]}") from None


def copy_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget, target: IO[bytes]) -> None:
    with buffered(archive, info, budget) as reader:
        while chunk := reader.read(1 << 16):
            target.write(chunk)
