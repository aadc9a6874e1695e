"""Payloads of the events the core emits (``system.started``, ``settings.changed``, ``log.entry``),
and the shapes the outbound publishers share."""

from typing import Any, TypedDict

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


# Shared by the two kinds of outbound publishers (MQTT and notification): the same event shapes.
class PublisherBody(TypedDict):
    publisher: dict[str, Any]


class PublisherRemoved(TypedDict):
    publisherId: str
    publisherName: str


class MappingCreated(TypedDict):
    publisherId: str
    mapping: dict[str, Any]


class MappingRemoved(TypedDict):
    publisherId: str
    mappingId: str


CORE_EVENTS = {SYSTEM_STARTED: SystemStarted, SETTINGS_CHANGED: SettingsChanged, LOG_ENTRY: LogEntry}
