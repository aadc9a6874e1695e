"""In process (tests/inprocess.py): zone and recipe sources through the index, and the worker's
decisions; the broker client is replaced by a recorder (the real one is tested in test_mqtt.py)."""

from __future__ import annotations

import json
from typing import Any


class Recorder:
    """Stands in for ``BrokerClients.publish``: every message handed to a 'connected' broker."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []

    def __call__(self, broker_id: str, topic: str, payload: str) -> bool:
        self.sent.append((broker_id, topic, json.loads(payload)))
        return True


def test_zone_and_recipe_sources(make_house):
    house = make_house()
    house.start()
    publishers = house.engine.publishers
    recorder = Recorder()
    publishers.clients.publish = recorder
    lamp = house.light("lamp", kind="light_onoff")
    watch = house.recipe("state-watch", equipment=lamp, dataKey="state", watchValue="ON", repeatInterval="1h")
    broker = publishers.create_broker({"name": "B", "url": "mqtt://127.0.0.1:1"})
    publisher = publishers.create_publisher({"name": "P", "brokerId": broker["id"], "topic": "out"})
    publishers.add_mapping(publisher["id"], {"publishKey": "lights", "sourceType": "zone", "sourceId": house.zone_id, "sourceKey": "lightsOn"})
    publishers.add_mapping(publisher["id"], {"publishKey": "alarm", "sourceType": "recipe", "sourceId": watch, "sourceKey": "alarm"})
    publishers.add_mapping(publisher["id"], {"publishKey": "off", "sourceType": "zone", "sourceId": house.zone_id, "sourceKey": "lightsTotal", "enabled": False})
    house.settle()
    recorder.sent.clear()

    house.report("lamp", state="ON")
    house.settle()
    got = [payload for _, _, payload in recorder.sent]
    assert {"lights": 1} in got and {"alarm": 1} in got  # lightsOn 1; the recipe's alarm true -> 1
    assert all("off" not in payload for payload in got)
    assert {topic for _, topic, _ in recorder.sent} == {"out"}

    recorder.sent.clear()
    assert publishers.test(publisher["id"]) == 2  # two enabled mappings with a value
    assert [p for _, _, p in recorder.sent] == [{"lights": 1}, {"alarm": 1}]
