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


class RawJson(bytes):
    """Already-encoded JSON a handler returns as it is (cached fragments, joined lists)."""

    @classmethod
    def array(cls, parts: list[bytes]) -> "RawJson":
        return cls(b"[" + b",".join(parts) + b"]")
