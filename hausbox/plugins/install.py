"""Plugin archives: download (bounded), verify, and unpack safely.

An archive is a zip holding ``manifest.json`` and the plugin's Python package at its root (or in
one top folder, which is stripped). Refused with a 400 before anything is written: a path that
escapes (``..``, absolute, a drive, a backslash), a link or any entry that is neither a file nor a
folder, an encrypted entry, a name given twice, more than ``MAX_FILES`` entries, more than
``MAX_UNPACKED_BYTES`` unpacked (counted as it is read, not as the archive claims). Unpacking
writes into a fresh folder beside the target and is renamed into place only once complete.

The digest of an unpacked tree (``tree_digest``: every file's path and sha256) is what a later load
compares the folder on disk with (see ``loader.py``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import stat
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from hausbox.core.errors import ApiError, BadRequest
from hausbox.sdk.manifest import ManifestError, check_manifest

MAX_ARCHIVE_BYTES = 20 << 20  # a download larger than this is refused
MAX_UNPACKED_BYTES = 50 << 20
MAX_FILES = 2000
MAX_MANIFEST_BYTES = 256 << 10
TIMEOUT_S = (10.0, 30.0)  # connect, read
ASSET = "plugin.zip"
REPO = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class DownloadError(ApiError):
    """The registry or the release host did not give what was asked (502)."""

    status = 502


def check_repo(repo: Any) -> str:
    """``owner/repo`` trimmed, or BadRequest."""
    if not isinstance(repo, str):
        raise BadRequest("repo must be a string")
    repo = repo.strip()
    if not REPO.match(repo) or repo.split("/")[1] in (".", ".."):
        raise BadRequest("repo must be owner/repo")
    return repo


def release_url(base: str, repo: str, version: str | None) -> str:
    """The archive of ``repo`` at ``version`` (``None``: the latest release), GitHub's layout."""
    base = base.rstrip("/")
    if version is None:
        return f"{base}/{repo}/releases/latest/download/{ASSET}"
    return f"{base}/{repo}/releases/download/v{version}/{ASSET}"


def fetch(url: str, max_bytes: int, what: str) -> bytes:
    """GET ``url`` (http or https), at most ``max_bytes``; DownloadError on any failure."""
    if not url.lower().startswith(("http://", "https://")):
        raise DownloadError(f"{what}: only http and https URLs are fetched")
    import requests

    try:
        with requests.get(url, timeout=TIMEOUT_S, stream=True) as response:
            if response.status_code != 200:
                raise DownloadError(f"{what}: {url} answered {response.status_code}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise BadRequest(f"{what} is larger than {max_bytes} bytes")
            body = bytearray()
            for chunk in response.iter_content(64 << 10):
                body += chunk
                if len(body) > max_bytes:
                    raise BadRequest(f"{what} is larger than {max_bytes} bytes")
            return bytes(body)
    except requests.RequestException as error:
        raise DownloadError(f"{what}: {url} could not be fetched ({error.__class__.__name__})") from None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Archive:
    """A downloaded archive, checked: its hash, its manifest and its files (path -> bytes)."""

    data: bytes
    sha256: str
    manifest: dict[str, Any]
    files: dict[str, bytes]

    @property
    def digest(self) -> str:
        return tree_digest({path: hashlib.sha256(content).hexdigest() for path, content in self.files.items()})


def tree_digest(hashes: dict[str, str]) -> str:
    """One sha256 over every ``path -> sha256`` of a tree, in path order."""
    h = hashlib.sha256()
    for path in sorted(hashes):
        h.update(f"{path}\0{hashes[path]}\n".encode())
    return h.hexdigest()


def _safe_name(name: str) -> PurePosixPath:
    if "\\" in name or "\0" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise BadRequest(f"archive entry {name[:200]!r} has an absolute or non-portable path")
    path = PurePosixPath(name)
    if any(part in ("..", "") for part in path.parts) or not path.parts or path.parts[0] == ".":
        raise BadRequest(f"archive entry {name[:200]!r} escapes the plugin folder")
    return path


def read_archive(data: bytes, repo: str | None = None) -> Archive:
    """Check an archive in memory (see the module docstring); BadRequest naming what is wrong."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise BadRequest(f"the archive is not a valid zip file ({error})") from None
    if len(entries) > MAX_FILES:
        raise BadRequest(f"the archive holds more than {MAX_FILES} entries")
    files: dict[str, bytes] = {}
    total = 0
    seen: set[str] = set()
    for entry in entries:
        path = _safe_name(entry.filename.rstrip("/") if entry.is_dir() else entry.filename)
        key = str(path)
        if key.lower() in seen:
            raise BadRequest(f"archive entry {key[:200]!r} is given twice")
        seen.add(key.lower())
        mode = entry.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if entry.flag_bits & 0x1:
            raise BadRequest(f"archive entry {key[:200]!r} is encrypted")
        if entry.is_dir():
            if kind not in (0, stat.S_IFDIR):
                raise BadRequest(f"archive entry {key[:200]!r} is not a plain folder")
            continue
        if kind not in (0, stat.S_IFREG):
            raise BadRequest(f"archive entry {key[:200]!r} is a link or a special file: refused")
        content = bytearray()
        try:
            with archive.open(entry) as stream:
                while chunk := stream.read(64 << 10):
                    content += chunk
                    total += len(chunk)
                    if total > MAX_UNPACKED_BYTES:
                        raise BadRequest(f"the archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as error:
            raise BadRequest(f"archive entry {key[:200]!r} cannot be read ({error})") from None
        files[key] = bytes(content)
    files = _strip_top_folder(files)
    manifest = _manifest(files, repo)
    if "__init__.py" not in files:
        raise BadRequest("the archive has no __init__.py beside its manifest.json")
    return Archive(data, sha256(data), manifest, files)


def _strip_top_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    if "manifest.json" in files or not files:
        return files
    tops = {path.split("/", 1)[0] for path in files}
    if len(tops) == 1 and all("/" in path for path in files):
        top = tops.pop() + "/"
        return {path[len(top):]: content for path, content in files.items()}
    return files


def _manifest(files: dict[str, bytes], repo: str | None) -> dict[str, Any]:
    raw = files.get("manifest.json")
    if raw is None:
        raise BadRequest("the archive has no manifest.json")
    if len(raw) > MAX_MANIFEST_BYTES:
        raise BadRequest("manifest.json is too large")
    try:
        manifest = check_manifest(json.loads(raw.decode("utf-8")), "manifest.json")
    except (UnicodeDecodeError, ValueError) as error:  # ManifestError is a ValueError
        raise BadRequest(str(error) if isinstance(error, ManifestError) else "manifest.json is not valid JSON") from None
    if not isinstance(manifest.get("repo"), str) or not manifest["repo"].strip():
        raise BadRequest("manifest.json: repo is required (text)")
    if repo is not None and manifest["repo"].strip().lower() != repo.lower():
        raise BadRequest(f"manifest.json: repo {manifest['repo'][:200]} is not {repo}")
    if "sowelVersion" in manifest and not isinstance(manifest["sowelVersion"], str):
        raise BadRequest("manifest.json: sowelVersion must be text")
    if "settings" in manifest and not isinstance(manifest["settings"], list):
        raise BadRequest("manifest.json: settings must be a list")
    return manifest


def unpack(archive: Archive, target: Path) -> None:
    """Write the archive's files to ``target`` (which must not exist), all or nothing."""
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f".tmp-{uuid.uuid4().hex}"
    staging.mkdir(mode=0o755)
    try:
        root = staging.resolve()
        for name, content in archive.files.items():
            path = (staging / name)
            if not path.resolve().is_relative_to(root):  # belt and braces: names were checked
                raise BadRequest(f"archive entry {name[:200]!r} escapes the plugin folder")
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(content)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def folder_digest(folder: Path) -> str:
    """The ``tree_digest`` of the files under ``folder``; ValueError on a link or a special file."""
    hashes: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise ValueError(f"{path.relative_to(folder)} is a link or a special file")
        for name in filenames:
            path = Path(dirpath) / name
            hashes[path.relative_to(folder).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return tree_digest(hashes)
