"""The release artifact: downloaded (bounded), verified (size and sha256), unpacked safely.

Nothing is unpacked before the whole file matches the size and sha256 the feed announced. The
wheelhouse zip may hold only plain ``*.whl`` names at its top level: a folder, a path (``..``,
absolute, a backslash), a link, an encrypted entry or a name given twice is refused.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any

MAX_ARTIFACT_BYTES = 1 << 30
MAX_UNPACKED_BYTES = 2 << 30
TIMEOUT_S = (10.0, 60.0)  # connect, read
CHUNK = 256 << 10


class ArtifactError(Exception):
    """The artifact could not be fetched, or is not the one announced: nothing was installed."""


def download(url: str, target: Path, size: int) -> str:
    """Fetch ``url`` into ``target`` (at most ``size`` bytes); returns the sha256 of what came."""
    if not url.lower().startswith(("http://", "https://")):
        raise ArtifactError(f"only http and https artifacts are fetched: {url[:200]}")
    if size > MAX_ARTIFACT_BYTES:
        raise ArtifactError(f"the artifact is announced at {size} bytes, more than {MAX_ARTIFACT_BYTES}")
    import requests  # here: the boot-time recovery imports this module and never downloads

    digest = hashlib.sha256()
    received = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with requests.get(url, timeout=TIMEOUT_S, stream=True) as response, open(target, "wb") as out:
            if response.status_code != 200:
                raise ArtifactError(f"{url[:200]} answered {response.status_code}")
            for chunk in response.iter_content(CHUNK):
                received += len(chunk)
                if received > size:
                    raise ArtifactError(f"the artifact is larger than the {size} bytes announced")
                digest.update(chunk)
                out.write(chunk)
    except requests.RequestException as error:
        raise ArtifactError(f"{url[:200]} could not be fetched ({error.__class__.__name__})") from None
    if received != size:
        raise ArtifactError(f"the artifact has {received} bytes, not the {size} announced")
    return digest.hexdigest()


def verify(path: Path, artifact: dict[str, Any]) -> None:
    """The downloaded file is the announced one (size and sha256), or ArtifactError."""
    expected = str(artifact.get("sha256", "")).lower()
    actual = hashlib.sha256()
    with open(path, "rb") as source:
        for chunk in iter(lambda: source.read(CHUNK), b""):
            actual.update(chunk)
    if path.stat().st_size != artifact.get("size"):
        raise ArtifactError(f"the artifact has {path.stat().st_size} bytes, not the {artifact.get('size')} announced")
    if actual.hexdigest() != expected:
        raise ArtifactError(f"sha256 mismatch: the artifact is {actual.hexdigest()}, the release announces {expected or 'none'}")


def _check_entry(info: zipfile.ZipInfo, seen: set[str]) -> None:
    name = info.filename
    if "/" in name or "\\" in name or name in ("", ".", "..") or not name.endswith(".whl"):
        raise ArtifactError(f"wheelhouse entry {name[:200]!r} is not a wheel at the top level")
    kind = stat.S_IFMT(info.external_attr >> 16)  # zero when the archiver recorded no file type
    if kind and kind != stat.S_IFREG:
        raise ArtifactError(f"wheelhouse entry {name[:200]!r} is a link or a special file")
    if info.flag_bits & 0x1:
        raise ArtifactError(f"wheelhouse entry {name[:200]!r} is encrypted")
    if name in seen:
        raise ArtifactError(f"wheelhouse entry {name[:200]!r} is given twice")
    seen.add(name)


def unpack(path: Path, target: Path) -> list[str]:
    """Unpack the wheelhouse zip ``path`` into the fresh folder ``target``; the wheel names."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ArtifactError("the artifact is not a zip") from None
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with archive:
        seen: set[str] = set()
        for info in archive.infolist():
            _check_entry(info, seen)
        written = 0
        for info in archive.infolist():
            fd = os.open(target / info.filename, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with archive.open(info) as source, os.fdopen(fd, "wb") as out:
                for chunk in iter(lambda: source.read(CHUNK), b""):
                    written += len(chunk)  # counted as read, not as the archive claims
                    if written > MAX_UNPACKED_BYTES:
                        raise ArtifactError(f"the wheelhouse unpacks to more than {MAX_UNPACKED_BYTES} bytes")
                    out.write(chunk)
    if not seen:
        raise ArtifactError("the wheelhouse holds no wheel")
    return sorted(seen)
