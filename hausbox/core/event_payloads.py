"""Payloads of the events the core emits (``system.started``, ``settings.changed``, ``log.entry``)."""

from typing import TypedDict

SYSTEM_STARTED = "system.started"
SETTINGS_CHANGED = "settings.changed"
LOG_ENTRY = "log.entry"


class SystemStarted(TypedDict):
    pass


class SettingsChanged(TypedDict):
    keys: list[str]


class LogEntry(TypedDict):
    level: str
    module: str
    msg: str
    time: str


CORE_EVENTS = {SYSTEM_STARTED: SystemStarted, SETTINGS_CHANGED: SettingsChanged, LOG_ENTRY: LogEntry}
