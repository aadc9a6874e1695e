"""The history writer in process: what is written (rules, write filter), when (the commit
interval, the stop), and that a restart reads it back."""

from __future__ import annotations

import json
import sqlite3

from hausbox.devices.discovery import DataSpec
from hausbox.history.journal import Journal
from hausbox.history.rules import WriteFilter, is_historized
from hausbox.history.batch import Batch
from hausbox.history.store import JOURNAL_NAME, VALUE
from tests.inprocess import local_ms

START = "2026-06-15 08:00"


def sensor(house, name="meter"):
    """An equipment on one device with a temperature, a power, an enum state and a generic count."""
    data = [
        DataSpec("temperature", "number", "temperature", "°C"),
        DataSpec("power", "number", "power", "W"),
        DataSpec("state", "enum", "generic", enum_values=["ON", "OFF"]),
        DataSpec("count", "number", "generic"),
        DataSpec("j1_price", "number", "energy"),
    ]
    device = house.device(name, data)
    return house.equipment(name, "sensor", [device])


def raw(house, equipment_id, alias):
    return house.engine.history.store.raw(equipment_id, alias)


def committed(house, equipment_id, alias):
    """What a restart would find: the points in history.db and those in the journal beside it."""
    with sqlite3.connect(house.data_dir / "history.db") as db:
        stored = db.execute(
            f"SELECT ts, {VALUE} FROM points JOIN series ON series.id = points.series WHERE equipment_id = ? AND alias = ? ORDER BY ts", (equipment_id, alias)
        ).fetchall()
    journal = Journal(house.data_dir / JOURNAL_NAME)
    journaled = [(ts, v) for _seq, body in journal.replay() for e, a, ts, v in Batch.from_document(body).points if (e, a) == (equipment_id, alias)]
    journal.close()
    return sorted(stored + journaled)


def test_rules_override_then_alias_then_category():
    assert is_historized(None, "temperature", "temperature")
    assert not is_historized(0, "temperature", "temperature")
    assert is_historized(1, "state", "generic")
    assert not is_historized(None, "j1_price", "energy")
    assert not is_historized(None, "demand_30min", "power")
    assert is_historized(None, "setpoint", "generic")
    assert is_historized(None, "power", None)
    assert not is_historized(None, "state", "generic")


def test_deadbands_and_intervals():
    write = WriteFilter()
    key = ("eq", "temperature")
    assert write.accept(key, 20.0, "temperature", 0, False)  # the first always
    assert not write.accept(key, 25.0, "temperature", 29_999, False)  # too soon, however far
    assert not write.accept(key, 20.1, "temperature", 60_000, False)  # inside the deadband
    assert write.accept(key, 20.2, "temperature", 60_000, False)  # at its edge
    assert write.accept(key, 20.2, "temperature", 360_000, False)  # past the max interval
    lux = ("eq", "illuminance")
    assert write.accept(lux, 200.0, "luminosity", 0, False)
    assert not write.accept(lux, 209.0, "luminosity", 60_000, False)  # 5 % of 200 is 10
    assert write.accept(lux, 210.0, "luminosity", 60_000, False)
    other = ("eq", "count")
    assert write.accept(other, 1.0, "generic", 0, False)
    assert not write.accept(other, 1.0, "generic", 60_000, False)
    assert write.accept(other, 1.5, "generic", 60_000, False)
    state = ("eq", "contact")
    assert write.accept(state, 1.0, "contact", 0, True)
    assert write.accept(state, 0.0, "contact", 1, True)  # discrete: every change, at once
    assert not write.accept(state, 0.0, "contact", 2, True)


def test_the_rules_and_the_filter_decide_what_is_written(make_house):
    house = make_house(start=START)
    meter = sensor(house)
    house.start()
    house.report("meter", temperature=20.0, power=100, state="ON", count=1, j1_price=3)
    house.advance(10)
    house.report("meter", temperature=23.0, power=300)  # 10 s later: too soon for the filter
    house.advance(50)
    house.report("meter", temperature=20.1, power=102)  # 60 s later, inside both deadbands of what was written
    house.advance(60)
    house.report("meter", temperature=20.3, power=110)  # 120 s later, outside both
    house.advance(10)
    t0 = local_ms(START)
    assert raw(house, meter, "temperature") == [(t0, 20.0), (t0 + 120_000, 20.3)]
    assert raw(house, meter, "power") == [(t0, 100.0), (t0 + 120_000, 110.0)]
    assert raw(house, meter, "state") == []  # a generic enum: not historized
    assert raw(house, meter, "count") == []
    assert raw(house, meter, "j1_price") == []  # the alias rule beats the energy category


def test_the_binding_override_turns_a_binding_on_and_off(make_house):
    house = make_house(start=START)
    meter = sensor(house)
    equipment = house.engine.equipments.get(meter)
    equipment.data_bindings["state"].historize = 1
    equipment.data_bindings["temperature"].historize = 0
    house.start()
    house.report("meter", temperature=20.0, state="ON")
    house.advance(1)
    house.report("meter", state="OFF")
    house.advance(10)
    t0 = local_ms(START)
    assert raw(house, meter, "state") == [(t0, 1.0), (t0 + 1000, 0.0)]
    assert raw(house, meter, "temperature") == []


def test_points_are_committed_at_the_interval_not_before(make_house):
    house = make_house(start=START)
    house.engine.settings.set("history.commitIntervalSeconds", 10)
    meter = sensor(house)
    house.start()
    house.report("meter", temperature=20.0)
    house.advance(9)
    assert committed(house, meter, "temperature") == []
    assert house.engine.history.pending == 1
    house.advance(1)
    assert committed(house, meter, "temperature") == [(local_ms(START), 20.0)]
    assert house.engine.history.pending == 0


def test_a_stop_commits_the_rest_and_a_restart_reads_it_back(make_house):
    house = make_house(start=START)
    meter = sensor(house)
    house.start()
    house.report("meter", temperature=20.0, power=50)
    house.advance(1)
    assert committed(house, meter, "temperature") == []
    house.restart()
    house.start()
    t0 = local_ms(START)
    assert raw(house, meter, "temperature") == [(t0, 20.0)]
    assert raw(house, meter, "power") == [(t0, 50.0)]
    house.advance(2)
    house.report("meter", power=500)  # new series ids go on from the stored ones
    house.advance(10)
    assert raw(house, meter, "power") == [(t0, 50.0), (t0 + 3000, 500.0)]


def test_a_refused_write_raises_the_alarm_and_keeps_the_points(make_house):
    house = make_house(start=START)
    meter = sensor(house)
    history = house.engine.history
    store_write = history.store.write

    def full(batch, late_from=None):
        raise sqlite3.OperationalError("database or disk is full")

    history.store.write = full
    house.start()
    house.report("meter", temperature=20.0)
    house.advance(10)
    assert history.pending == 1 and history.errors.total(house.clock.now_ms()) >= 1
    assert house.engine.alarms.is_active("history-write") and house.engine.alarms.is_active("storage-low")
    history.store.write = store_write
    house.advance(10)
    assert history.pending == 0
    assert raw(house, meter, "temperature") == [(local_ms(START), 20.0)]
    assert house.engine.state != "closed"


def test_status_counts_historized_bindings_and_the_points_of_the_last_24_hours(make_house):
    house = make_house(start=START)
    sensor(house)  # temperature and power are historized; state, count and j1_price are not
    house.start()
    house.report("meter", temperature=20.0, power=5)
    house.advance(10)
    status, _, body = house.api("GET", "/history/status")
    assert status == 200
    body = json.loads(body)
    assert body.pop("export")["configured"] is False  # no InfluxDB server set
    assert body == {
        "configured": True, "connected": True, "enabled": True, "historizedBindings": 2,
        "stats": {"pointsWritten24h": 2, "errors24h": 0, "pendingPoints": 0, "droppedPoints": 0},
    }  # fmt: skip
    house.advance(24 * 3600)
    assert json.loads(house.api("GET", "/history/status")[2])["stats"]["pointsWritten24h"] == 0


def test_the_history_settings_are_checked(make_house):
    house = make_house()
    for key, value in (("history.commitIntervalSeconds", 0), ("history.commitIntervalSeconds", "5"), ("history.minWriteInterval", -1), ("history.maxWriteInterval", 1.5)):
        status, _, body = house.api("PUT", "/settings", {key: value})
        assert status == 400, (key, value, body)
    status, _, body = house.api("PUT", "/settings", {"history.commitIntervalSeconds": 2, "history.minWriteInterval": 0})
    assert status == 200, body


def test_a_refused_flush_keeps_the_journaled_points_and_raises_the_alarm(make_house):
    house = make_house(start=START)
    meter = sensor(house)
    store = house.engine.history.store
    real_flush = store.flush

    def full():
        raise sqlite3.OperationalError("database or disk is full")

    store.flush = full
    house.start()
    house.report("meter", temperature=20.0)
    house.advance(10)
    house.engine.history.flush()  # what the half-hourly flush does
    assert house.engine.alarms.is_active("history-write")
    assert raw(house, meter, "temperature") == [(local_ms(START), 20.0)]  # still readable, still journaled
    assert committed(house, meter, "temperature") == [(local_ms(START), 20.0)]
    store.flush = real_flush
    house.engine.history.flush()
    assert not house.engine.alarms.is_active("history-write")
    assert store.pending == 0 and store.count() == 1
