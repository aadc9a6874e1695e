"""The events of alarms, sunlight, the time zone watch, versions and self-update, with their payloads."""

from typing import TypedDict

ALARM_RAISED = "system.alarm.raised"
ALARM_RESOLVED = "system.alarm.resolved"
RESTART_REQUIRED = "system.restart_required"
SUNLIGHT_CHANGED = "sunlight.changed"
UPDATE_AVAILABLE = "system.update.available"
UPDATE_PROGRESS = "system.update.progress"
UPDATE_ERROR = "system.update.error"


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


class UpdateAvailable(TypedDict):
    current: str
    latest: str
    releaseUrl: str | None


class UpdateProgress(TypedDict):
    step: str  # backup, spawning, spawned, then the helper's: download, verify, install, switch, restart, health, rollback, done
    message: str


class UpdateError(TypedDict):
    error: str


EVENTS = {
    ALARM_RAISED: AlarmRaised,
    ALARM_RESOLVED: AlarmResolved,
    RESTART_REQUIRED: RestartRequired,
    SUNLIGHT_CHANGED: SunlightChanged,
    UPDATE_AVAILABLE: UpdateAvailable,
    UPDATE_PROGRESS: UpdateProgress,
    UPDATE_ERROR: UpdateError,
}
