"""System alarms: raised once, resolved once, announced on the bus (and so to every client)."""

from __future__ import annotations

import logging
from typing import Any

from hausbox.core.bus import EventBus
from hausbox.core.clock import iso_utc, now_ms

log = logging.getLogger("hausbox.alarms")
LEVELS = ("info", "warning", "error")


class Alarms:
    def __init__(self, bus: EventBus):
        self._bus = bus
        self._active: dict[str, dict[str, Any]] = {}

    def raise_alarm(self, alarm_id: str, level: str, source: str, message: str, remind: bool = False) -> bool:
        """Raise an alarm; False when it is already active (unless ``remind`` re-announces it)."""
        if alarm_id in self._active and not remind:
            return False
        self._active[alarm_id] = {"alarmId": alarm_id, "level": level, "source": source, "message": message, "raisedAt": iso_utc(now_ms())}
        log.warning("alarm %s (%s): %s", alarm_id, level, message)
        self._bus.emit("system.alarm.raised", alarmId=alarm_id, level=level, source=source, message=message)
        return True

    def resolve(self, alarm_id: str, message: str | None = None) -> bool:
        alarm = self._active.pop(alarm_id, None)
        if alarm is None:
            return False
        text = message or f"Resolved: {alarm['message']}"
        log.info("alarm %s resolved", alarm_id)
        self._bus.emit("system.alarm.resolved", alarmId=alarm_id, source=alarm["source"], message=text)
        return True

    def restore(self, alarm_id: str, level: str, source: str, message: str, raised_at: str | None) -> None:
        """Mark an alarm active without announcing it again (it was announced before a restart)."""
        self._active[alarm_id] = {"alarmId": alarm_id, "level": level, "source": source, "message": message, "raisedAt": raised_at}

    def forget(self, alarm_id: str) -> None:
        """Drop an alarm without announcing a resolution (its subject is gone)."""
        self._active.pop(alarm_id, None)

    def is_active(self, alarm_id: str) -> bool:
        return alarm_id in self._active

    def active(self) -> list[dict[str, Any]]:
        return list(self._active.values())
