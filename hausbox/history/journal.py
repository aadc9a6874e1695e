"""The history journal: each commit's batch appended to a small file, so SQLite is written rarely.

Why: a SQLite commit rewrites whole pages (the last page of each table, the interior pages above
it) and WAL writes them twice (the log, then the checkpoint), so committing every few seconds costs
an SD card several times the points' own bytes. The writer instead appends each batch here (a few
hundred bytes, one ``write``: a kill -9 loses nothing appended), keeps it in memory, and the store
moves everything to SQLite every half hour in one transaction; then the journal starts again.

A frame is ``length (4 bytes) | crc32 (4) | sequence (8) | zlib(JSON)``. A torn last frame (the
process died mid-write) fails its check and is ignored with what follows. Each flush records the
last sequence it holds in the database, in the same transaction, so replaying a journal whose
truncation did not happen (a crash between the two) adds nothing twice.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import zlib
from pathlib import Path
from typing import Any, Iterator

log = logging.getLogger("hausbox.history")

_HEADER = struct.Struct("<IIQ")


class Journal:
    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(str(path), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.sequence = 0
        self.size = 0

    def replay(self) -> Iterator[tuple[int, Any]]:
        """Every whole frame, oldest first: ``(sequence, document)``; a torn tail is cut off."""
        with open(self.path, "rb") as file:
            data = file.read()
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, crc, sequence = _HEADER.unpack_from(data, offset)
            body = data[offset + _HEADER.size : offset + _HEADER.size + length]
            if len(body) < length or zlib.crc32(body) != crc:
                log.warning("history journal: a torn frame at byte %d ignored (%d bytes after it)", offset, len(data) - offset)
                break
            self.sequence = max(self.sequence, sequence)
            yield sequence, json.loads(zlib.decompress(body))
            offset += _HEADER.size + length
        if offset < len(data):
            os.ftruncate(self._fd, offset)  # the next frames follow the last whole one
        self.size = offset

    def append(self, document: Any) -> int:
        """Append one frame (one write call); returns its sequence number."""
        body = zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)
        self.sequence += 1
        frame = _HEADER.pack(len(body), zlib.crc32(body), self.sequence) + body
        written = os.write(self._fd, frame)
        if written != len(frame):
            os.ftruncate(self._fd, self.size)
            self.sequence -= 1
            raise OSError(f"history journal: short write ({written} of {len(frame)} bytes)")
        self.size += len(frame)
        return self.sequence

    def clear(self) -> None:
        """Start again (after the store holds everything up to ``sequence``)."""
        os.ftruncate(self._fd, 0)
        self.size = 0

    def close(self) -> None:
        os.close(self._fd)
