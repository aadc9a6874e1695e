"""Saved charts in-process: timestamps from the engine's clock, list order."""

from __future__ import annotations

from hausbox.charts.service import Charts
from hausbox.core.clock import ManualClock


def test_update_stamps_updated_at_from_the_engine_clock(house):
    instance = house.engine
    clock = ManualClock(instance.clock.tz, 1_767_225_600_000)
    charts = Charts(instance.db, clock)
    chart = charts.create("Clocked", {"series": []})
    assert chart["createdAt"] == chart["updatedAt"] == "2026-01-01T00:00:00.000Z"
    clock.advance(90)
    updated = charts.update(chart["id"], {"name": "Renamed"})
    assert updated["createdAt"] == "2026-01-01T00:00:00.000Z" and updated["updatedAt"] == "2026-01-01T00:01:30.000Z"
    assert charts.update(chart["id"], {})["updatedAt"] == updated["updatedAt"]
    assert charts.list()[-1] == updated
