"""What a stored or sent value may be: one we can store and encode back.

Every value that comes in (a request body, a device's reading from MQTT) is checked here once, so
nothing the engine keeps can fail its encoder later (orjson refuses integers beyond 64 bits, lone
surrogates and nesting deeper than 254). Accepted: JSON's types, integers in the signed 64-bit range
(SQLite's), finite numbers, text that is valid Unicode, nesting at most ``MAX_DEPTH`` deep.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32  # of a request body or a reported value: far below the encoder's 254, with room to wrap it
ENCODER_DEPTH = 250  # what a repaired copy keeps (orjson's limit is 254 levels)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class UnstorableValue(ValueError):
    """A value we could not store or encode back; the message says where and why."""


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "must be valid Unicode text (no lone surrogates)"
        return None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else "must be an integer between -2^63 and 2^63-1"
    if isinstance(value, float):
        return None if math.isfinite(value) else "must be a finite number"
    return "must be a JSON value"


def _path(where: str, trail: tuple | None) -> str:
    """The text of a path kept as (parent trail, key) links, built only when it is shown."""
    keys: list[Any] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    for key in reversed(keys):
        where = f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else str(key))
    return where or "value"


def problem(value: Any, where: str = "") -> str | None:
    """Why ``value`` cannot be stored and encoded back (naming where in it), or None when it can.

    Scalars cost a type check (the MQTT message path calls this for every reading); containers are
    walked without recursion, so no depth can exhaust the stack."""
    kind = type(value)
    if kind is float:
        if value - value == 0.0:  # finite: inf - inf and nan - nan are nan
            return None
    elif kind is int:
        if INT64_MIN <= value <= INT64_MAX:
            return None
    elif kind is str:
        if value.isascii():
            return None
    elif kind is bool or value is None:
        return None
    stack: list[tuple[Any, tuple | None, int]] = [(value, None, 0)]
    while stack:
        item, trail, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                return f"{_path(where, trail)} is nested too deeply (at most {MAX_DEPTH} levels)"
            is_dict = isinstance(item, dict)
            for key, child in item.items() if is_dict else enumerate(item):
                if is_dict and (not isinstance(key, str) or _scalar_problem(key)):
                    return f"{_path(where, trail)} has a key that is not valid text"
                stack.append((child, (trail, key), depth + 1))
            continue
        found = _scalar_problem(item)
        if found:
            return f"{_path(where, trail)} {found}"
    return None


def _refuse_constant(name: str) -> Any:
    raise UnstorableValue(f"{name} is not a JSON number")


def loads(raw: bytes | str) -> Any:
    """Parse JSON text into a value we can store and encode back, or raise UnstorableValue.

    ``json.loads`` keeps large integers exact (orjson would turn them into floats silently);
    NaN and Infinity are refused, and nesting too deep for the parser is an error, not a crash."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise UnstorableValue(f"body is nested too deeply (at most {MAX_DEPTH} levels)") from None
    found = problem(value, "body")
    if found:
        raise UnstorableValue(found)
    return value


def encodable(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` the encoder takes: what it cannot take is replaced (an integer beyond 64 bits
    by its text, text by its valid characters, a non-finite number or nesting too deep by null)."""
    if isinstance(value, dict):
        if depth >= ENCODER_DEPTH:
            return None
        return {_text(key) if isinstance(key, str) else key: encodable(child, depth + 1) for key, child in value.items()}
    if isinstance(value, (list, tuple)):
        return None if depth >= ENCODER_DEPTH else [encodable(child, depth + 1) for child in value]
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _text(value: str) -> str:
    return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")
