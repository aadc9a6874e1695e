"""The events of alarms, sunlight and the time zone watch, with their payloads."""

from typing import TypedDict

ALARM_RAISED = "system.alarm.raised"
ALARM_RESOLVED = "system.alarm.resolved"
RESTART_REQUIRED = "system.restart_required"
SUNLIGHT_CHANGED = "sunlight.changed"


class AlarmRaised(TypedDict):
    alarmId: str
    level: str
    source: str
    message: str


class AlarmResolved(TypedDict):
    alarmId: str
    source: str
    message: str


class RestartRequired(TypedDict):
    reason: str


class SunlightChanged(TypedDict):
    pass


EVENTS = {ALARM_RAISED: AlarmRaised, ALARM_RESOLVED: AlarmResolved, RESTART_REQUIRED: RestartRequired, SUNLIGHT_CHANGED: SunlightChanged}
