"""A full disk under the real server: the history cannot be written, the engine goes on, an alarm says
so, and once there is room again every point arrives; a stop on a full disk loses none of
the points it had acknowledged.

The disk is a real 8 MB tmpfs filled to its last byte (``tests/disk.py``), the values come through a
real mosquitto as zigbee2mqtt messages, and the history is read back over HTTP.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.disk import fill
from tests.harness import wait_for
from tests.zigbee import Z2m, zigbee_home

BEFORE = [18.0, 18.5]
WHILE_FULL = [19.0, 19.5, 20.0]


def _house_on(small_disk, make_server, broker, mqtt_client) -> tuple[Z2m, dict[str, Any]]:
    z2m = zigbee_home(make_server, broker, mqtt_client, data_dir=small_disk / "hausbox", env={"HAUSBOX_STORAGE_LOW_BYTES": str(1 << 20)})
    assert z2m.api.put("/settings", {"history.minWriteInterval": 0, "history.commitIntervalSeconds": 1}).status_code == 200
    return z2m, z2m.equipment("Meteo", "sensor", "salon_meteo")


def _publish(z2m: Z2m, values: list[float]) -> None:
    for value in values:
        z2m.publish("salon_meteo", {"temperature": value})
        z2m.wait_value("salon_meteo", "temperature", value)


def _temperatures(api, meteo: dict[str, Any]) -> list[float]:
    response = api.get(f"/history/{meteo['id']}/temperature?from=-1h&aggregation=raw")
    assert response.status_code == 200, response.text
    return [p["value"] for p in response.json()["points"]]


def _alarm_ids(api) -> set[str]:
    return {a["alarmId"] for a in api.get("/system/alarms").json()["alarms"]}


def test_a_full_disk_holds_the_points_raises_the_alarm_and_writes_them_once_there_is_room(small_disk, make_server, broker, mqtt_client):
    z2m, meteo = _house_on(small_disk, make_server, broker, mqtt_client)
    api = z2m.api
    _publish(z2m, BEFORE)
    wait_for(lambda: _temperatures(api, meteo) == BEFORE, timeout=10)
    # A stop moves the journal into SQLite and empties it: its next append needs a new block (until
    # then a full tmpfs still takes bytes into the journal's last, half-used page).
    z2m.home.server.restart()
    z2m.wait_status("connected")  # subscribed again: a value published before that is never delivered

    filler = fill(small_disk)
    _publish(z2m, WHILE_FULL)  # the engine goes on: values still reach the equipment
    wait_for(lambda: "history-write" in _alarm_ids(api), timeout=10)
    status = api.get("/history/status").json()
    assert status["connected"] is False and status["stats"]["pendingPoints"] == len(WHILE_FULL), status
    assert status["stats"]["errors24h"] >= 1
    assert api.get("/health").status_code == 200
    assert _temperatures(api, meteo) == BEFORE  # what the journal took is still read back

    filler.unlink()
    wait_for(lambda: "history-write" not in _alarm_ids(api), timeout=10)
    assert _temperatures(api, meteo) == BEFORE + WHILE_FULL
    status = api.get("/history/status").json()
    assert status["connected"] is True and status["stats"]["pendingPoints"] == 0 and status["stats"]["droppedPoints"] == 0


def test_a_stop_on_a_full_disk_loses_no_journaled_point(small_disk, make_server, broker, mqtt_client):
    z2m, meteo = _house_on(small_disk, make_server, broker, mqtt_client)
    _publish(z2m, BEFORE + WHILE_FULL)
    wait_for(lambda: _temperatures(z2m.api, meteo) == BEFORE + WHILE_FULL, timeout=10)  # journaled, not yet in SQLite
    server = z2m.home.server

    filler = fill(small_disk)
    assert server.stop() == 0  # SIGTERM: the final move into SQLite is refused, the journal keeps the points
    assert _stored_points(server) == 0
    assert "history" in server.output() and "disk is full" in server.output()
    filler.unlink()
    server.start()  # the journal is replayed and moved into SQLite
    assert _temperatures(server.api(z2m.api.token), meteo) == BEFORE + WHILE_FULL
    assert _stored_points(server) == len(BEFORE + WHILE_FULL)


def _stored_points(server) -> int:
    with sqlite3.connect(server.data_dir / "history.db") as db:
        return db.execute("SELECT count(*) FROM points").fetchone()[0]


def test_a_store_move_refused_by_a_full_disk_says_so_and_succeeds_once_there_is_room(small_disk):
    from hausbox.core.storage import is_storage_full
    from hausbox.history.batch import Batch
    from hausbox.history.store import HistoryStore

    store = HistoryStore(small_disk / "history.db")
    points = [("salon", "temperature", 1_781_424_000_000 + i * 1000, 20.0 + i / 100) for i in range(20_000)]
    store.write(Batch(points=points))
    filler = fill(small_disk)
    try:
        store.flush()
    except sqlite3.Error as error:
        assert is_storage_full(error), error  # the disk's answer, not a failed rollback's after SQLite rolled back itself
    else:
        raise AssertionError("a full disk took 20,000 points")
    assert store.pending == len(points)
    filler.unlink()
    assert store.flush() == len(points) and store.count() == len(points)

    filler = fill(small_disk)  # and a downsampling chunk that the disk refuses midway
    try:
        store.downsample_hours(points[0][2] - 3_600_000, points[-1][2] + 3_600_000, 0, points[-1][2])
    except sqlite3.Error as error:
        assert is_storage_full(error), error
    else:
        raise AssertionError("a full disk took a day of hourly rows")
    filler.unlink()
    assert store.downsample_hours(points[0][2] - 3_600_000, points[-1][2] + 3_600_000, 0, points[-1][2]) > 0
    store.close()
