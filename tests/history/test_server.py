"""Over the real server: values from a real MQTT broker reach history.db, and SIGTERM loses none."""

from __future__ import annotations

import sqlite3
import time

from hausbox.history.store import VALUE
from tests.zigbee import zigbee_home

VALUES = [18.0, 18.5, 19.0, 19.5, 20.0]


def test_sigterm_commits_every_point_still_in_memory(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client)
    response = z2m.api.put("/settings", {"history.minWriteInterval": 0, "history.commitIntervalSeconds": 300})
    assert response.status_code == 200, response.text
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    for value in VALUES:
        z2m.publish("salon_meteo", {"temperature": value})
        z2m.wait_value("salon_meteo", "temperature", value)
    server = z2m.home.server
    assert server.stop() == 0  # SIGTERM, long before the 300 s commit interval
    with sqlite3.connect(server.data_dir / "history.db") as db:
        stored = db.execute(
            f"SELECT {VALUE} FROM points JOIN series ON series.id = points.series WHERE equipment_id = ? AND alias = 'temperature' ORDER BY ts", (meteo["id"],)
        ).fetchall()
    assert [v for (v,) in stored] == VALUES


def test_real_mqtt_messages_read_back_over_http(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client)
    assert z2m.api.put("/settings", {"history.minWriteInterval": 0, "history.commitIntervalSeconds": 1}).status_code == 200
    plug = z2m.equipment("Four", "energy_meter", "cuisine_prise_four")
    readings = [(12.0, 1000), (12.25, 1800), (12.5, 0), (12.5, 5)]  # kWh counter, W
    for energy, power in readings:
        z2m.publish("cuisine_prise_four", {"energy": energy, "power": power})
        z2m.wait_value("cuisine_prise_four", "power", power)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        power = z2m.api.get(f"/history/{plug['id']}/power?from=-1h").json()
        if len(power["points"]) == len(readings):
            break
        time.sleep(0.2)
    assert power["resolution"] == "raw" and power["category"] == "power"
    assert [p["value"] for p in power["points"]] == [w for _, w in readings]
    energy = z2m.api.get(f"/history/{plug['id']}/energy?from=-1h&aggregation=1h").json()
    assert sum(p["value"] for p in energy["points"]) == 500.0  # Wh: 12.0 -> 12.5 kWh
    assert {"energy", "power"} <= set(z2m.api.get(f"/history/{plug['id']}").json()["aliases"])
    assert z2m.api.get(f"/history/sparkline/{plug['id']}/power").json()["values"]
    status = z2m.api.get("/history/status").json()
    assert status["connected"] is True and status["stats"]["pointsWritten24h"] >= len(readings)


def test_kill_9_loses_nothing_older_than_the_commit_interval(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client)
    assert z2m.api.put("/settings", {"history.minWriteInterval": 0, "history.commitIntervalSeconds": 1}).status_code == 200
    meteo = z2m.equipment("Meteo", "sensor", "salon_meteo")
    for value in VALUES:
        z2m.publish("salon_meteo", {"temperature": value})
        z2m.wait_value("salon_meteo", "temperature", value)
    time.sleep(2.5)  # two commit intervals: journaled, not yet in history.db (it moves every 30 minutes)
    server = z2m.home.server
    server.kill()
    with sqlite3.connect(server.data_dir / "history.db") as db:
        assert db.execute("SELECT count(*) FROM points").fetchone()[0] == 0
    server.restart()
    api = server.api(z2m.api.token)
    points = api.get(f"/history/{meteo['id']}/temperature?from=-1h").json()["points"]
    assert [p["value"] for p in points] == VALUES
