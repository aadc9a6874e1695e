"""Secrets generated on first start and kept in ``<data>/secrets.json`` (mode 0600).

The JWT signing key lives here, so tokens issued before a restart stay valid after it; so does the
admin token of the time-series store, and the VAPID key that signs web push messages (its public
half is what browsers subscribe with, so it must not change).
"""

from __future__ import annotations

import base64
import json
import os
import secrets as random
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "secrets.json"


@dataclass(frozen=True)
class Secrets:
    jwt_signing_key: str
    history_token: str
    vapid_private_key: str = ""  # P-256 private scalar, base64url (32 bytes)


def _vapid_key() -> str:
    from cryptography.hazmat.primitives.asymmetric import ec

    scalar = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value.to_bytes(32, "big")
    return base64.urlsafe_b64encode(scalar).rstrip(b"=").decode("ascii")


_GENERATORS = {"jwtSigningKey": lambda: random.token_hex(32), "historyToken": lambda: random.token_hex(32), "vapidPrivateKey": _vapid_key}


def _generate(stored: dict[str, str]) -> dict[str, str]:
    """A new value for each secret ``stored`` lacks."""
    return {key: make() for key, make in _GENERATORS.items() if not stored.get(key)}


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically to ``path``, readable by the owner only."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def load_or_create(data_dir: Path) -> Secrets:
    path = data_dir / FILE_NAME
    stored: dict[str, str] = {}
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
    missing = _generate(stored)
    if missing:
        stored.update(missing)
        write_private(path, json.dumps(stored, indent=2))
    return Secrets(jwt_signing_key=stored["jwtSigningKey"], history_token=stored["historyToken"], vapid_private_key=stored["vapidPrivateKey"])
