"""A request body streamed to a file: the ``file`` field of a multipart form, never whole in memory.

Bottle would parse the form itself, holding parts in memory or in the system's temporary folder
(a RAM disk on the appliance); a backup can be hundreds of MB, so the part goes straight to a file
under the data directory, a chunk at a time, and more than ``limit`` bytes is a 413.
"""

from __future__ import annotations

import re
from typing import IO, Any, Callable

from hausbox.core.errors import ApiError, BadRequest, PayloadTooLarge

CHUNK = 1 << 16
MAX_HEADER_BYTES = 16 << 10
_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.IGNORECASE)
_FIELD = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)


def boundary_of(content_type: str) -> bytes:
    match = _BOUNDARY.search(content_type)
    if not content_type.lower().startswith("multipart/form-data") or match is None or len(match.group(1)) > 200:
        raise BadRequest("Expected a multipart/form-data body with a file field, or a JSON body")
    return match.group(1).encode("latin-1")


def read_stream(stream: Any) -> Callable[[], bytes]:
    """A ``read`` of the server's input that answers 408 and 400 as ``api/app.py`` does."""

    def read() -> bytes:
        try:
            return stream.read(CHUNK)
        except TimeoutError:
            raise ApiError("Request body not received in time", status=408) from None
        except OSError:
            raise BadRequest("Malformed request body") from None

    return read


def save_file_field(read: Callable[[], bytes], boundary: bytes, target: IO[bytes], limit: int, field: str = "file") -> int:
    """Copy the multipart part named ``field`` into ``target``; returns its size. Other parts are
    skipped. No such part, or a body cut short: 400; a part above ``limit`` bytes: 413."""
    delimiter = b"\r\n--" + boundary
    buffer = b"\r\n"  # the first delimiter has no CRLF before it
    eof = False

    def fill(minimum: int) -> None:
        nonlocal buffer, eof
        while len(buffer) < minimum and not eof:
            chunk = read()
            if not chunk:
                eof = True
            buffer += chunk

    # Find the first delimiter, then walk part by part.
    while True:
        fill(len(delimiter) + 2)
        at = buffer.find(delimiter)
        if at >= 0:
            buffer = buffer[at + len(delimiter):]
            break
        if eof:
            raise BadRequest(f"The multipart body has no {field} field")
        buffer = buffer[-len(delimiter):]
    while True:
        fill(2)
        if buffer.startswith(b"--") or eof and not buffer:
            raise BadRequest(f"The multipart body has no {field} field")
        # The part's headers, up to the blank line.
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > MAX_HEADER_BYTES or eof:
                raise BadRequest("Malformed multipart body")
            fill(len(buffer) + CHUNK)
        headers, buffer = buffer.split(b"\r\n\r\n", 1)
        disposition = next((line for line in headers.split(b"\r\n") if line.lower().startswith(b"content-disposition:")), b"")
        match = _FIELD.search(disposition)
        wanted = match is not None and match.group(1) == field.encode()
        size = 0
        while True:
            fill(len(delimiter) + CHUNK)
            at = buffer.find(delimiter)
            keep = at if at >= 0 else max(0, len(buffer) - len(delimiter))  # a delimiter may start in this tail
            if wanted:
                size += keep
                if size > limit:
                    raise PayloadTooLarge(f"The backup is larger than {limit >> 20} MB")
                target.write(buffer[:keep])
            buffer = buffer[keep:]
            if at >= 0:
                buffer = buffer[len(delimiter):]
                break
            if eof:
                raise BadRequest("The multipart body ends before its closing boundary")
        if wanted:
            return size
