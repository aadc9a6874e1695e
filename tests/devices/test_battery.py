"""Low-battery alerts: low at <= 20 %, recovered at >= 25 %, reminded weekly, kept across restarts."""

from __future__ import annotations

from hausbox.core.clock import now_ms
from hausbox.devices import battery
from hausbox.devices.discovery import DataSpec


def _sensor(fake, name="sensor"):
    return fake.discover(name, [DataSpec("battery", "number", "battery", "%")])


def test_hysteresis_between_20_and_25(house):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    device = _sensor(fake)
    for level in (30, 21, 20, 15, 22, 24):
        fake.report("sensor", {"battery": level})
    raised = recorder.of("system.alarm.raised")
    assert len(raised) == 1 and raised[0]["alarmId"] == f"battery-low:{device.id}" and raised[0]["level"] == "warning"
    assert "20 %" in raised[0]["message"]
    assert recorder.of("system.alarm.resolved") == []
    alerts = engine.battery.alerts_json()
    assert [(a["deviceId"], a["level"]) for a in alerts] == [(device.id, 24.0)]
    fake.report("sensor", {"battery": 25})
    assert len(recorder.of("system.alarm.resolved")) == 1 and engine.battery.alerts_json() == []
    fake.report("sensor", {"battery": 19})
    assert len(recorder.of("system.alarm.raised")) == 2


def test_a_weekly_reminder_while_low(house, monkeypatch):
    engine, fake, recorder = house.engine, house.fake, house.recorder
    _sensor(fake)
    fake.report("sensor", {"battery": 10})
    assert engine.battery.remind_due() == 0
    later = now_ms() + battery.REMIND_EVERY_MS + 1000
    monkeypatch.setattr(battery, "now_ms", lambda: later)
    assert engine.battery.remind_due() == 1
    assert len(recorder.of("system.alarm.raised")) == 2
    assert engine.battery.remind_due() == 0


def test_an_alert_survives_a_restart_without_being_announced_again(house):
    device = _sensor(house.fake)
    house.fake.report("sensor", {"battery": 5})
    house.restart()
    again, fake_again, recorder = house.engine, house.fake, house.recorder
    assert [a["deviceId"] for a in again.battery.alerts_json()] == [device.id]
    fake_again.report("sensor", {"battery": 6})
    assert recorder.of("system.alarm.raised") == []
    fake_again.report("sensor", {"battery": 80})
    assert [e["alarmId"] for e in recorder.of("system.alarm.resolved")] == [f"battery-low:{device.id}"]


def test_a_removed_device_takes_its_alert_along(house):
    engine, fake = house.engine, house.fake
    device = _sensor(fake)
    fake.report("sensor", {"battery": 3})
    engine.devices.delete(device.id)
    assert engine.battery.alerts_json() == []
