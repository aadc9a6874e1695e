"""Low-battery alerts: low at <= 20 %, recovered at >= 25 %, a reminder every week while low.

Alerts are system alarms (``system.alarm.raised`` / ``.resolved``) and persisted, so a restart
neither forgets a low battery nor announces it again before the week is up.
"""

from __future__ import annotations

import logging
from typing import Any

import gevent
from pony import orm

from hausbox.core.bus import Event
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.workers import Worker
from hausbox.devices.manager import DeviceManager
from hausbox.system.alarms import Alarms

log = logging.getLogger("hausbox.battery-monitor")

LOW_AT = 20
RECOVERED_AT = 25
REMIND_EVERY_MS = 7 * 24 * 3600 * 1000
CHECK_EVERY_S = 3600.0


def alarm_id(device_id: str) -> str:
    return f"battery-low:{device_id}"


class BatteryMonitor:
    def __init__(self, db: orm.Database, worker: Worker, devices: DeviceManager, alarms: Alarms):
        self._db = db
        self._devices = devices
        self._alarms = alarms
        self._loop: gevent.Greenlet | None = None
        with orm.db_session:
            self._alerts: dict[str, dict[str, Any]] = {
                row.device_id: {"level": row.level, "raisedAt": row.raised_at, "remindedAt": row.reminded_at} for row in db.BatteryAlert.select()
            }
        for device_id, alert in self._alerts.items():
            device = devices.get(device_id)
            if device is not None:  # re-arm quietly: it was announced before the restart
                alarms.restore(alarm_id(device_id), "warning", "battery", self._message(device.name, alert["level"]), iso_utc(alert["raisedAt"]))
        # battery readings only (rare), written to the database in the worker
        worker.on("device.data.updated", self._on_data, accept=lambda e: e["key"] == "battery")
        worker.on("device.removed", lambda e: self._forget(e["deviceId"]))

    @staticmethod
    def _message(name: str, level: float) -> str:
        return f"Low battery on {name}: {level:g} %"

    def start(self) -> None:
        self._loop = gevent.spawn(self._remind_loop)

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.kill()

    def _on_data(self, event: Event) -> None:
        if event["key"] != "battery":
            return
        level = event["value"]
        if isinstance(level, bool) or not isinstance(level, (int, float)):
            return
        device_id = event["deviceId"]
        if level <= LOW_AT and device_id not in self._alerts:
            self._raise(device_id, event["deviceName"], float(level))
        elif level >= RECOVERED_AT and device_id in self._alerts:
            self._resolve(device_id, event["deviceName"], float(level))
        elif device_id in self._alerts:
            self._alerts[device_id]["level"] = float(level)

    def _raise(self, device_id: str, name: str, level: float) -> None:
        stamp = now_ms()
        with orm.db_session:
            self._db.BatteryAlert(device_id=device_id, level=level, raised_at=stamp, reminded_at=stamp)
        self._alerts[device_id] = {"level": level, "raisedAt": stamp, "remindedAt": stamp}
        self._alarms.raise_alarm(alarm_id(device_id), "warning", "battery", self._message(name, level))

    def _resolve(self, device_id: str, name: str, level: float) -> None:
        self._drop(device_id)
        self._alarms.resolve(alarm_id(device_id), f"Battery recovered on {name}: {level:g} %")

    def _forget(self, device_id: str) -> None:
        """The device is gone: its alert goes without a resolution being announced."""
        if self._drop(device_id):
            self._alarms.forget(alarm_id(device_id))

    def _drop(self, device_id: str) -> bool:
        if self._alerts.pop(device_id, None) is None:
            return False
        with orm.db_session:
            row = self._db.BatteryAlert.get(device_id=device_id)
            if row is not None:
                row.delete()
        return True

    def remind_due(self) -> int:
        """Announce again every alert older than a week since its last announcement."""
        now, reminded = now_ms(), 0
        for device_id, alert in list(self._alerts.items()):
            device = self._devices.get(device_id)
            if device is None or now - alert["remindedAt"] < REMIND_EVERY_MS:
                continue
            alert["remindedAt"] = now
            with orm.db_session:
                self._db.BatteryAlert[device_id].reminded_at = now
            self._alarms.raise_alarm(alarm_id(device_id), "warning", "battery", self._message(device.name, alert["level"]), remind=True)
            reminded += 1
        return reminded

    def _remind_loop(self) -> None:
        while True:
            gevent.sleep(CHECK_EVERY_S)
            try:
                self.remind_due()
            except Exception:
                log.exception("battery reminder failed")

    def alerts_json(self) -> list[dict[str, Any]]:
        alerts = []
        for device_id, alert in self._alerts.items():
            device = self._devices.get(device_id)
            if device is not None:
                alerts.append(
                    {
                        "deviceId": device_id,
                        "deviceName": device.name,
                        "zoneId": device.zone_id,
                        "level": alert["level"],
                        "since": iso_utc(alert["raisedAt"]),
                        "lastReminderAt": iso_utc(alert["remindedAt"]),
                    }
                )
        return sorted(alerts, key=lambda a: (a["level"], a["deviceName"]))
