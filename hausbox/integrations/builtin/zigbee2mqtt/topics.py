"""What a message under the base topic is, and the payload forms of availability.

Friendly names may contain "/" (``cuisine/spot``), so a topic is never split on slashes: a state
topic is ``<base>/<name>`` for a name the bridge listed, and ``<base>/<name>/availability`` an
availability. ``<name>/set``, ``<name>/get``, ``<name>/<endpoint>/set`` ... are commands (ours or
another client's) and are never state. Until the first ``bridge/devices`` of a session has been
read, the names are not known yet: a topic that is not a command is then tried as a state (the
device manager ignores a name it does not know).
"""

from __future__ import annotations

import json
from typing import Any, Collection, Literal

Kind = Literal["devices", "event", "bridge", "state", "availability", "ignored"]

AVAILABILITY_SUFFIX = "/availability"
_COMMAND_WORDS = frozenset({"set", "get"})


def is_command(rest: str) -> bool:
    """``x/set``, ``x/get``, ``x/l1/set``, ``x/set/brightness``: orders and read requests."""
    parts = rest.split("/")
    return len(parts) > 1 and any(part in _COMMAND_WORDS for part in parts[1:])


class Router:
    def __init__(self, base_topic: str):
        self.base = base_topic.strip().strip("/") or "zigbee2mqtt"
        self.prefix = self.base + "/"

    @property
    def subscription(self) -> str:
        return self.base + "/#"

    def set_topic(self, name: str) -> str:
        return f"{self.prefix}{name}/set"

    def classify(self, topic: str, known: Collection[str] | None) -> tuple[Kind, str | None]:
        """``(kind, friendly name)``; ``known`` is None before the first device list."""
        if not topic.startswith(self.prefix):
            return "ignored", None
        rest = topic[len(self.prefix) :]
        if rest.startswith("bridge/"):
            if rest == "bridge/devices":
                return "devices", None
            if rest == "bridge/event":
                return "event", None
            return "bridge", None
        if known is not None and rest in known:
            return "state", rest
        if rest.endswith(AVAILABILITY_SUFFIX) and len(rest) > len(AVAILABILITY_SUFFIX):
            return "availability", rest[: -len(AVAILABILITY_SUFFIX)]
        if known is None and rest and not is_command(rest):
            return "state", rest
        return "ignored", None


def availability(payload: bytes) -> str | None:
    """``online`` / ``offline`` from ``{"state": "online"}`` or a plain ``online``; else None."""
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    value: Any = text
    if text.startswith("{") or text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if isinstance(value, dict):
            value = value.get("state")
    if isinstance(value, str) and value.strip().lower() in ("online", "offline"):
        return value.strip().lower()
    return None


def json_object(payload: bytes) -> dict[str, Any] | None:
    """A state payload: a JSON object, or None for anything else (non-JSON is ignored)."""
    if payload[:1] != b"{":
        payload = payload.lstrip()
        if payload[:1] != b"{":
            return None
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
