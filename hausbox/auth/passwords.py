"""bcrypt password hashing, run off the event loop: a hash takes long enough to stall everything else."""

from __future__ import annotations

import bcrypt

from hausbox.core.errors import BadRequest
from hausbox.core.workers import in_thread

MIN_LENGTH = 8
MAX_BYTES = 72  # bcrypt reads no further; refusing longer passwords beats silently truncating them


def check_policy(password: str, field: str = "password") -> None:
    if len(password) < MIN_LENGTH:
        raise BadRequest(f"{field} must be at least {MIN_LENGTH} characters")
    if len(password.encode("utf-8")) > MAX_BYTES:
        raise BadRequest(f"{field} must be at most {MAX_BYTES} bytes")


def hash_password(password: str, rounds: int) -> str:
    salt = bcrypt.gensalt(rounds)
    return in_thread(bcrypt.hashpw, password.encode("utf-8"), salt).decode("ascii")


def verify_password(password: str, hashed: str) -> bool:
    candidate = password.encode("utf-8")
    if len(candidate) > MAX_BYTES:
        return False
    return bool(in_thread(bcrypt.checkpw, candidate, hashed.encode("ascii")))
