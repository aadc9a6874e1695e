"""The events of modes, with their payloads."""

from typing import Any, TypedDict

MODE_CREATED = "mode.created"
MODE_UPDATED = "mode.updated"
MODE_REMOVED = "mode.removed"
MODE_ACTIVATED = "mode.activated"
MODE_DEACTIVATED = "mode.deactivated"


class ModeBody(TypedDict):
    mode: dict[str, Any]


class ModeNamed(TypedDict):
    modeId: str
    modeName: str


EVENTS = {MODE_CREATED: ModeBody, MODE_UPDATED: ModeBody, MODE_REMOVED: ModeNamed, MODE_ACTIVATED: ModeNamed, MODE_DEACTIVATED: ModeNamed}
