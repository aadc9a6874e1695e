"""The web console's files, served by the engine itself under ``/`` (never ``/api`` nor ``/ws``).

There is no build step: the files under ``static/`` are what the browser runs. So that a browser may
keep them for a year and still never run a stale one after an update, they are addressed under
``/assets/<tag>/``, where the tag is a hash of their contents; ``index.html`` (the only file named
without the tag) is read with ``no-cache`` and names the current tag. Any other path without a file
extension is a page of the console's own router: it gets ``index.html`` too.
"""

from __future__ import annotations

import hashlib
import mimetypes
import posixpath
from pathlib import Path
from typing import Callable, Iterable

STATIC = Path(__file__).resolve().parent / "static"
ASSETS_PREFIX = "/assets/"
TAG_PLACEHOLDER = "__ASSETS__"
IMMUTABLE = "public, max-age=31536000, immutable"
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".md": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}


def is_console_path(path: str) -> bool:
    """Everything but the API and the WebSocket: those two stay the engine's, whatever files exist."""
    return not (path == "/api" or path.startswith("/api/") or path == "/ws" or path.startswith("/ws/"))


class Console:
    """The static files, read once at start (a few hundred kB): no disk access per request."""

    def __init__(self, root: Path = STATIC):
        self.files: dict[str, bytes] = {}
        digest = hashlib.sha256()
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = file.relative_to(root).as_posix()
            data = file.read_bytes()
            self.files[relative] = data
            digest.update(relative.encode() + b"\0" + data)
        self.tag = digest.hexdigest()[:12]
        self.index = self.files.pop("index.html").replace(TAG_PLACEHOLDER.encode(), f"{ASSETS_PREFIX}{self.tag}".encode())

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            return _answer(start_response, method, "405 Method Not Allowed", b'{"error":"Method not allowed"}', "application/json", "no-store", [("Allow", "GET, HEAD")])
        path = environ.get("PATH_INFO") or "/"
        if path.startswith(ASSETS_PREFIX):
            return self._asset(path[len(ASSETS_PREFIX) :], method, start_response)
        if posixpath.splitext(path)[1]:
            # A file-like path outside /assets/ (favicon.ico, a typo): no page there, and a broken
            # link must not get the index as its body.
            return _not_found(start_response, method)
        return _answer(start_response, method, "200 OK", self.index, TYPES[".html"], "no-cache")

    def _asset(self, rest: str, method: str, start_response: Callable) -> Iterable[bytes]:
        tag, _, name = rest.partition("/")
        data = self.files.get(posixpath.normpath(name)) if name and ".." not in name.split("/") else None
        if data is None:
            return _not_found(start_response, method)
        # An old page asking for an asset by a tag that is gone gets today's file, not kept long:
        # it reloads index.html soon anyway.
        cache = IMMUTABLE if tag == self.tag else "no-cache"
        content_type = TYPES.get(posixpath.splitext(name)[1]) or mimetypes.guess_type(name)[0] or "application/octet-stream"
        return _answer(start_response, method, "200 OK", data, content_type, cache)


def _not_found(start_response: Callable, method: str) -> Iterable[bytes]:
    """The engine's own 404 body, JSON like every other error it sends."""
    return _answer(start_response, method, "404 Not Found", b'{"error":"Not found"}', "application/json", "no-store")


def _answer(start_response: Callable, method: str, status: str, body: bytes, content_type: str, cache: str, more: list | None = None) -> Iterable[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body))), ("Cache-Control", cache), *(more or [])])
    return [b""] if method == "HEAD" else [body]
