"""JSON encoding for everything we send: responses, WebSocket batches (orjson: several times faster)."""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(data: Any) -> bytes:
    """Compact UTF-8 JSON; values JSON has no type for are written as their text."""
    return orjson.dumps(data, default=str, option=_OPTIONS)


def dumps_text(data: Any) -> str:
    return dumps(data).decode("utf-8")


class RawJson:
    """Already-encoded JSON that a handler returns to be sent as it is (no copy, no re-encoding)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


def join_array(parts: list[bytes]) -> bytes:
    """A JSON array from encoded elements."""
    return b"[" + b",".join(parts) + b"]"
