"""JSON encoding for everything we send: responses, WebSocket batches (orjson: several times faster)."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from hausbox.core.values import encodable, problem

log = logging.getLogger("hausbox.json")

_OPTIONS = orjson.OPT_NON_STR_KEYS
_LOGGED_LIMIT = 100
_logged: set[str] = set()


def dumps(data: Any) -> bytes:
    """Compact UTF-8 JSON; values JSON has no type for are written as their text.

    A value the encoder refuses (one stored before values were checked, or a bug) never fails the
    whole: it is replaced (``values.encodable``) and logged once, so one bad value cannot break a
    listing or a WebSocket batch."""
    try:
        return orjson.dumps(data, default=str, option=_OPTIONS)
    except TypeError as error:  # orjson.JSONEncodeError is a TypeError
        _log_once(data, error)
        return orjson.dumps(encodable(data), default=str, option=_OPTIONS)


def _log_once(data: Any, error: Exception) -> None:
    reason = problem(data) or str(error)
    if reason not in _logged and len(_logged) < _LOGGED_LIMIT:
        _logged.add(reason)
        log.error("a value could not be encoded and was replaced: %s", reason)


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
