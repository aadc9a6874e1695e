"""Reading query-string parameters with a clear 400 when one is malformed."""

from __future__ import annotations

from typing import Any

from hausbox.core.errors import BadRequest


def int_param(query: Any, name: str, default: int, low: int, high: int, clamp: bool = True) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer")
    if clamp:
        return max(low, min(high, value))
    if not low <= value <= high:
        raise BadRequest(f"{name} must be between {low} and {high}")
    return value


def bool_param(query: Any, name: str, default: bool) -> bool:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise BadRequest(f"{name} must be true or false")
