"""Over the real server: values from a real MQTT broker reach history.db, and SIGTERM loses none."""

from __future__ import annotations

import sqlite3

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
            "SELECT value FROM points JOIN series ON series.id = points.series WHERE equipment_id = ? AND alias = 'temperature' ORDER BY ts", (meteo["id"],)
        ).fetchall()
    assert [v for (v,) in stored] == VALUES
