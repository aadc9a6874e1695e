"""The device state snapshot: values survive restarts and crashes, a damaged file never stops the
engine, and the upgrade from values kept in the database (migration 0011) carries them over."""

from __future__ import annotations

import gzip
import json
import os
import random
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import gevent
import pytest

from hausbox.core.database import migrate
from hausbox.devices import manager as manager_module
from hausbox.devices import persistence, snapshot
from hausbox.devices.device import stable_id
from hausbox.devices.discovery import DataSpec
from tests.inprocess import FAKE_ID

REPO = Path(__file__).resolve().parents[2]
METER = [DataSpec("power", "number", "power", "W"), DataSpec("state", "enum", "generic", enum_values=["ON", "OFF"])]


def state_file(data_dir: Path) -> Path:
    return data_dir / snapshot.FILE_NAME


def saved(data_dir: Path) -> dict:
    return json.loads(gzip.decompress(state_file(data_dir).read_bytes()))


def log_text(data_dir: Path) -> str:
    return (data_dir / "logs" / "hausbox.log").read_text()


def sql(path: Path, statement: str, *params) -> list[tuple]:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        return conn.execute(statement, params).fetchall()


@pytest.fixture
def data_dir(tmp_path) -> Path:
    return tmp_path / "data"


def test_values_times_status_and_last_seen_survive_a_restart(make_house, data_dir):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    fake.discover("meter", METER)
    fake.discover("plug", METER)
    fake.discover("silent", METER)  # never reported: nothing of it is saved
    fake.report("meter", {"power": 42.5, "state": "ON"})
    fake.report("plug", {"power": 3})
    engine.devices.update_status(FAKE_ID, "plug", "offline")
    before = {k: engine.devices.find(FAKE_ID, k).to_json() for k in ("meter", "plug", "silent")}
    house.stop()
    assert set(saved(data_dir)["devices"]) == {before["meter"]["id"], before["plug"]["id"]}

    house.restart()
    again = house.engine
    try:
        after = {k: again.devices.find(FAKE_ID, k).to_json() for k in ("meter", "plug", "silent")}
        assert after == before
        assert after["meter"]["status"] == "online" and after["plug"]["status"] == "offline"
        assert after["silent"]["status"] == "unknown" and after["silent"]["lastSeen"] is None
        assert [d["value"] for d in after["meter"]["data"]] == [42.5, "ON"]
        assert again.devices.counts() == {"total": 3, "online": 1, "offline": 1, "unknown": 1}
    finally:
        house.stop()


def test_exact_times_and_values_of_every_json_type_round_trip(make_house, data_dir, monkeypatch):
    clock = iter(range(1_779_000_000_000, 1_779_000_000_000 + 10_000_000, 1_000))
    monkeypatch.setattr(manager_module, "now_ms", lambda: next(clock))
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    types = {"number": "number", "flag": "boolean", "text": "text", "nothing": "text", "color": "text", "list": "text", "big": "number"}
    specs = [DataSpec(key, type_) for key, type_ in types.items()]
    device = fake.discover("odd", specs)
    fake.report("odd", {"number": 1.1, "flag": True, "text": "é ✓", "color": {"x": 0.3, "y": 0.5}, "list": [1, "a", None]})
    fake.report("odd", {"number": 1.1, "big": 2**63 - 1})  # the largest a reading may be (beyond: refused at the door)
    fake.report("odd", {"nothing": None})
    expected = {d.key: (d.value, d.last_updated, d.last_changed) for d in device.data.values()}
    expected_seen = device.last_seen
    house.stop()

    house.restart()
    again = house.engine
    try:
        device = again.devices.find(FAKE_ID, "odd")
        assert {d.key: (d.value, d.last_updated, d.last_changed) for d in device.data.values()} == expected
        assert device.last_seen == expected_seen
        assert expected["number"][1] != expected["number"][2]  # updated after its last change
        assert expected["big"][0] == 2**63 - 1
    finally:
        house.stop()


def test_a_flush_writes_only_when_something_changed(make_house, data_dir, monkeypatch):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    try:
        writes = []
        real_write = snapshot.write
        monkeypatch.setattr(snapshot, "write", lambda path, body: writes.append(body) or real_write(path, body))
        fake.discover("meter", METER)
        assert engine.devices.flush() is False  # a new device has no state yet
        fake.report("meter", {"power": 1})
        assert engine.devices.flush() is True
        assert engine.devices.flush() is False
        fake.report("meter", {"power": 1})  # same value, but the device was seen again
        assert engine.devices.flush() is True
        engine.devices.update_status(FAKE_ID, "meter", "offline")
        assert engine.devices.flush() is True
        assert len(writes) == 3
    finally:
        house.stop()
    assert len(writes) == 3  # nothing new at stop


def test_the_flusher_writes_periodically_and_stop_writes_the_rest(make_house, data_dir, monkeypatch):
    monkeypatch.setattr(persistence, "FLUSH_INTERVAL_S", 0.05)
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    engine.devices.start()
    fake.discover("meter", METER)
    fake.report("meter", {"power": 5})
    gevent.sleep(0.3)
    device_id = engine.devices.find(FAKE_ID, "meter").id
    assert saved(data_dir)["devices"][device_id]["data"]["power"][0] == 5
    fake.report("meter", {"power": 6})
    house.stop()
    assert saved(data_dir)["devices"][device_id]["data"]["power"][0] == 6


def test_a_failed_write_keeps_the_previous_snapshot_and_is_retried(make_house, data_dir, monkeypatch):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    try:
        fake.discover("meter", METER)
        fake.report("meter", {"power": 1})
        engine.devices.flush()
        previous = state_file(data_dir).read_bytes()

        def interrupted(src, dst):
            raise OSError(5, "Input/output error")

        fake.report("meter", {"power": 2})
        monkeypatch.setattr(os, "replace", interrupted)  # the rename never happens
        with pytest.raises(OSError):
            engine.devices.flush()
        monkeypatch.undo()
        assert state_file(data_dir).read_bytes() == previous
        assert not state_file(data_dir).with_name(snapshot.FILE_NAME + ".tmp").exists()
        assert engine.devices.flush() is True  # still due
    finally:
        house.stop()
    device_id = engine.devices.find(FAKE_ID, "meter").id
    assert saved(data_dir)["devices"][device_id]["data"]["power"][0] == 2


def test_a_truncated_temporary_file_left_by_a_crash_is_harmless(make_house, data_dir):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    fake.discover("meter", METER)
    fake.report("meter", {"power": 7})
    house.stop()
    good = state_file(data_dir).read_bytes()
    # A crash while the next snapshot was written: half a temporary file, the rename never done.
    state_file(data_dir).with_name(snapshot.FILE_NAME + ".tmp").write_bytes(good[: len(good) // 2])

    house.restart()
    again, fake = house.engine, house.fake
    try:
        assert again.devices.find(FAKE_ID, "meter").data["power"].value == 7
        fake.report("meter", {"power": 8})
        assert again.devices.flush() is True  # the leftover is simply overwritten
        assert not state_file(data_dir).with_name(snapshot.FILE_NAME + ".tmp").exists()
    finally:
        house.stop()
    assert "damaged" not in log_text(data_dir)


KILLED_WHILE_WRITING = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from hausbox.devices.discovery import DataSpec
    from tests.inprocess import House

    house = House(Path(sys.argv[1]))
    engine, fake = house.engine, house.fake
    fake.discover("meter", [DataSpec("power", "number", "power", "W")])
    fake.report("meter", {"power": 1})
    engine.devices.flush()
    fake.report("meter", {"power": 2})
    real_write = os.write
    def write_then_die(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9 in the middle of the new snapshot
    os.write = write_then_die
    engine.devices.flush()
    """
)


def test_kill_9_in_the_middle_of_a_write_leaves_the_previous_snapshot(make_house, data_dir):
    run = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING, str(data_dir)], cwd=REPO, capture_output=True, timeout=120)
    assert run.returncode == -9, run.stderr.decode()
    assert state_file(data_dir).with_name(snapshot.FILE_NAME + ".tmp").exists()  # it did die mid-write

    house = make_house(data_dir=data_dir)
    again = house.engine
    try:
        assert again.devices.find(FAKE_ID, "meter").data["power"].value == 1
    finally:
        house.stop()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda good: good[: len(good) // 2], id="truncated"),
        pytest.param(lambda good: b"\x00" * 64, id="zeroes"),
        pytest.param(lambda good: b"", id="empty"),
        pytest.param(lambda good: gzip.compress(b'{"format": 1, "devices": '), id="bad-json"),
        pytest.param(lambda good: gzip.compress(b'{"format": 99, "devices": {}}'), id="unknown-format"),
        pytest.param(lambda good: gzip.compress(b"[1, 2]"), id="not-an-object"),
    ],
)
def test_a_damaged_snapshot_is_ignored_with_a_warning(make_house, data_dir, damage):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    fake.discover("meter", METER)
    fake.report("meter", {"power": 7})
    house.stop()
    state_file(data_dir).write_bytes(damage(state_file(data_dir).read_bytes()))

    house.restart()
    again, fake = house.engine, house.fake
    try:
        device = again.devices.find(FAKE_ID, "meter")
        assert device.data["power"].value is None and device.status == "unknown"
        fake.report("meter", {"power": 9})  # the engine works as ever
        assert again.devices.flush() is True
    finally:
        house.stop()
    assert "device state snapshot" in log_text(data_dir) and "ignored" in log_text(data_dir)
    assert saved(data_dir)["devices"][device.id]["data"]["power"][0] == 9


def test_malformed_entries_are_skipped_the_others_kept(make_house, data_dir):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    good = fake.discover("good", METER)
    bad = fake.discover("bad", METER)
    house.stop()
    body = {
        "format": snapshot.FORMAT,
        "writtenAt": 1_779_000_000_000,
        "devices": {
            good.id: {"status": "online", "lastSeen": 1_779_000_000_000, "data": {"power": [3, 0, 500]}},
            bad.id: {"status": "online", "lastSeen": "yesterday", "data": {}},
        },
    }
    state_file(data_dir).write_bytes(gzip.compress(json.dumps(body).encode()))
    house.restart()
    again = house.engine
    try:
        datum = again.devices.get(good.id).data["power"]
        assert (datum.value, datum.last_updated, datum.last_changed) == (3, 1_779_000_000_000, 1_778_999_999_500)
        assert again.devices.get(bad.id).status == "unknown"
    finally:
        house.stop()
    assert "1 malformed device entries ignored" in log_text(data_dir)


def test_state_of_a_removed_device_or_datum_is_ignored_then_dropped(make_house, data_dir):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    kept = fake.discover("kept", METER)
    gone = fake.discover("gone", METER)
    fake.report("kept", {"power": 1, "state": "ON"})
    fake.report("gone", {"power": 2})
    engine.devices.flush()
    older = state_file(data_dir).read_bytes()  # holds both devices and both data
    engine.devices.delete(gone.id)
    fake.discover("kept", METER[:1])  # "state" is no longer declared
    house.stop()
    assert set(saved(data_dir)["devices"]) == {kept.id}
    assert set(saved(data_dir)["devices"][kept.id]["data"]) == {"power"}
    # A crash before that last write: the older snapshot still names them.
    state_file(data_dir).write_bytes(older)

    house.restart()
    again, fake = house.engine, house.fake
    try:
        assert again.devices.get(gone.id) is None
        device = again.devices.get(kept.id)
        assert device.data["power"].value == 1 and set(device.data) == {"power"}
        fake.discover("kept", METER)  # declared again: it starts unknown, the old value is not revived
        assert device.data["state"].value is None
    finally:
        house.stop()
    assert gone.id not in saved(data_dir)["devices"]


def test_the_database_no_longer_holds_volatile_state(make_house, data_dir):
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    fake.discover("meter", METER)
    fake.report("meter", {"power": 1})
    house.stop()
    db = data_dir / "hausbox.db"
    assert {row[1] for row in sql(db, "PRAGMA table_info(devices)")} & {"status", "last_seen"} == set()
    assert {row[1] for row in sql(db, "PRAGMA table_info(device_data)")} & {"value", "last_updated", "last_changed"} == set()
    assert {row[0] for row in sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%handover%'")} == set()


# ---- the upgrade: values kept in the database until migration 0011 -----------------------------


def old_database(data_dir: Path) -> dict[str, str]:
    """A database at schema 10 holding devices with values, as the previous release left it."""
    path = data_dir / "hausbox.db"
    migrate(path, up_to=10)
    devices = {"meter": "dev-meter", "plug": "dev-plug", "fresh": "dev-fresh"}
    for name, device_id in devices.items():
        status, seen = {"meter": ("online", 1_779_000_000_000), "plug": ("offline", 1_778_000_000_000), "fresh": ("unknown", None)}[name]
        sql(
            path,
            "INSERT INTO devices (id, integration_id, source_device_id, name, source, status, last_seen, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, 'fake', ?, ?, 1, 1)",
            device_id, FAKE_ID, name, name, status, seen,
        )  # fmt: skip
        for key, type_ in (("power", "number"), ("state", "enum")):
            sql(path, "INSERT INTO device_data (id, device_id, key, type, category) VALUES (?, ?, ?, ?, 'generic')", stable_id(device_id, "data", key), device_id, key, type_)
    sql(path, "UPDATE device_data SET value = '12.5', last_updated = 1779000000000, last_changed = 1778990000000 WHERE device_id = 'dev-meter' AND key = 'power'")
    sql(path, "UPDATE device_data SET value = '\"ON\"', last_updated = 1779000000000, last_changed = 1779000000000 WHERE device_id = 'dev-meter' AND key = 'state'")
    sql(path, "UPDATE device_data SET value = '{\"x\": [1, 2]}', last_updated = 1778000000000 WHERE device_id = 'dev-plug' AND key = 'state'")
    # An equipment bound to a datum: the bindings (foreign keys on these tables) must survive.
    sql(path, "INSERT INTO zones (id, name, created_at, updated_at) VALUES ('z', 'Home', 1, 1)")
    sql(path, "INSERT INTO equipments (id, name, type, zone_id, created_at, updated_at) VALUES ('eq', 'Meter', 'sensor', 'z', 1, 1)")
    sql(path, "INSERT INTO data_bindings (id, equipment_id, device_data_id, alias) VALUES ('b', 'eq', ?, 'power')", stable_id("dev-meter", "data", "power"))
    return devices


def assert_carried_over(engine) -> None:
    meter, plug, fresh = (engine.devices.get(i) for i in ("dev-meter", "dev-plug", "dev-fresh"))
    assert (meter.status, meter.last_seen, plug.status, plug.last_seen, fresh.status, fresh.last_seen) == (
        "online", 1_779_000_000_000, "offline", 1_778_000_000_000, "unknown", None,
    )  # fmt: skip
    power = meter.data["power"]
    assert (power.value, power.last_updated, power.last_changed) == (12.5, 1_779_000_000_000, 1_778_990_000_000)
    assert meter.data["state"].value == "ON"
    assert (plug.data["state"].value, plug.data["state"].last_updated, plug.data["state"].last_changed) == ({"x": [1, 2]}, 1_778_000_000_000, None)
    assert plug.data["power"].value is None and fresh.data["power"].value is None
    assert engine.equipments.get("eq").data_bindings["power"].device_data_id == power.id


def test_the_upgrade_carries_the_values_of_the_database_into_the_snapshot(make_house, data_dir):
    old_database(data_dir)
    house = make_house(data_dir=data_dir)
    engine = house.engine
    try:
        assert_carried_over(engine)
        assert state_file(data_dir).exists()  # written at once, before the handover is dropped
        assert engine.log_ring.query(search="device values moved from the database into device-state.json.gz")
    finally:
        house.stop()
    db = data_dir / "hausbox.db"
    assert {row[0] for row in sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%handover%'")} == set()
    assert sql(db, "SELECT COUNT(*) FROM device_data")[0][0] == 6 and sql(db, "SELECT COUNT(*) FROM data_bindings")[0][0] == 1
    assert sql(db, "PRAGMA foreign_key_check") == []
    assert sql(db, "PRAGMA integrity_check") == [("ok",)]

    house.restart()  # from the snapshot alone now
    again = house.engine
    try:
        assert_carried_over(again)
    finally:
        house.stop()


def test_the_handover_is_kept_until_the_snapshot_is_written(make_house, data_dir, monkeypatch):
    old_database(data_dir)

    def full_disk(path, body):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot, "write", full_disk)
    house = make_house(data_dir=data_dir)
    engine = house.engine
    try:
        assert_carried_over(engine)  # in memory all the same
    finally:
        house.stop()
    db = data_dir / "hausbox.db"
    assert len(sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%handover%'")) == 2
    monkeypatch.undo()

    house.restart()
    again = house.engine
    try:
        assert_carried_over(again)
    finally:
        house.stop()
    assert sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%handover%'") == []


def test_a_snapshot_newer_than_the_handover_wins(make_house, data_dir):
    """A crash after the snapshot was written but before the handover tables were dropped."""
    old_database(data_dir)
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    fake.report("meter", {"power": 99})
    house.stop()
    db = data_dir / "hausbox.db"
    sql(db, "CREATE TABLE device_state_handover (device_id TEXT PRIMARY KEY, status TEXT, last_seen INTEGER)")
    sql(db, "CREATE TABLE datum_state_handover (device_id TEXT, key TEXT, value TEXT, last_updated INTEGER, last_changed INTEGER)")
    sql(db, "INSERT INTO datum_state_handover VALUES ('dev-meter', 'power', '12.5', 1, 1)")
    house.restart()
    again = house.engine
    try:
        assert again.devices.get("dev-meter").data["power"].value == 99
    finally:
        house.stop()
    assert sql(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%handover%'") == []


# ---- size -----------------------------------------------------------------------------------------


def test_a_500_device_home_snapshots_in_well_under_100_kb(make_house, data_dir, monkeypatch):
    """500 devices x 8 data after an hour at 10 messages/s (the disk benchmark's rate)."""
    rng = random.Random(7)
    clock = [1_779_000_000_000]
    monkeypatch.setattr(manager_module, "now_ms", lambda: clock[0])
    house = make_house(data_dir=data_dir)
    engine, fake = house.engine, house.fake
    try:
        keys = ["temperature", "humidity", "battery", "linkquality", "state", "brightness", "power", "energy"]
        specs = [DataSpec(k, "enum" if k == "state" else "number", k) for k in keys]
        for i in range(500):
            fake.discover(f"device-{i:03d}", specs)
        values = {i: {k: rng.uniform(0, 1000) for k in keys} for i in range(500)}
        for _ in range(36_000):  # one hour, 10 a second
            clock[0] += 100
            i = rng.randrange(500)
            payload = {}
            for key in rng.sample(keys, rng.randint(1, 8)):
                if key == "state":
                    payload[key] = rng.choice(["ON", "OFF"])
                elif key in ("battery", "linkquality", "brightness"):
                    payload[key] = rng.randint(0, 254)
                else:
                    values[i][key] += rng.choice([0, 0, 0.1, -0.1, 1.5])
                    payload[key] = round(values[i][key], 1)
            fake.report(f"device-{i:03d}", payload)
        assert engine.devices.flush() is True
        size = state_file(data_dir).stat().st_size
        print(f"snapshot of 500 devices x 8 data: {size} bytes, {size * 3600 / persistence.FLUSH_INTERVAL_S / 1e6:.2f} MB/h")
        assert size < 100_000
    finally:
        house.stop()
