"""GET /activity and the activity stream over real HTTP and WebSocket, with the simulator's lights."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import wait_for
from tests.wsclient import Collector, expect_welcome, subscribe

SIM = "integration.simulator."


def _simulator_status(home) -> str:
    return next(i for i in home.admin.get("/integrations").json() if i["id"] == "simulator")["status"]


def _set_simulator(home, enabled: bool) -> None:
    values = {SIM + "enabled": enabled, SIM + "rooms": 2, SIM + "seed": 5, SIM + "message_rate": 0}
    assert home.admin.put("/settings", values).status_code == 200
    wait_for(lambda: _simulator_status(home) == ("connected" if enabled else "not_configured"), timeout=10)


def _items(api, **params: Any) -> list[dict[str, Any]]:
    response = api.get("/activity", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"items"}
    return body["items"]


def _order(home, equipment_id: str, value: str = "ON") -> None:
    response = home.admin.post(f"/equipments/{equipment_id}/orders/state", {"value": value})
    assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def house(home):
    """Zones Upstairs > Bedroom and Kitchen, each with a simulated light as an equipment."""
    _set_simulator(home, True)
    devices = {d["sourceDeviceId"]: d["id"] for d in home.admin.get("/devices").json() if d["integrationId"] == "simulator"}
    upstairs = home.admin.post("/zones", {"name": "Upstairs"}).json()["id"]
    bedroom = home.admin.post("/zones", {"name": "Bedroom", "parentId": upstairs}).json()["id"]
    kitchen = home.admin.post("/zones", {"name": "Kitchen"}).json()["id"]
    lights = {}
    for zone_id, source in ((upstairs, "sim-salon-light-1"), (bedroom, "sim-salon-dimmer-1"), (kitchen, "sim-cuisine-light-1")):
        created = home.admin.post("/equipments", {"name": f"Light {source}", "type": "light_dimmable", "zoneId": zone_id, "deviceIds": [devices[source]]})
        assert created.status_code == 201, created.text
        lights[zone_id] = created.json()["id"]
    return {"home": home, "upstairs": upstairs, "bedroom": bedroom, "kitchen": kitchen, "lights": lights}


def test_an_order_is_an_item_with_its_manual_source(house):
    home = house["home"]
    _order(home, house["lights"][house["kitchen"]])
    item = _items(home.admin, limit=1)[0]
    assert set(item) == {"id", "timestamp", "category", "zoneId", "message", "source"}
    assert item["category"] == "order" and item["zoneId"] == house["kitchen"]
    assert isinstance(item["timestamp"], int) and isinstance(item["id"], str)
    assert item["message"]["template"] == "order.executed"
    assert item["message"]["params"]["equipmentId"] == house["lights"][house["kitchen"]] and item["message"]["params"]["value"] == "ON"
    assert item["source"]["kind"] == "manual"


def test_the_zone_filter_takes_descendants_and_global_items(house):
    home, up, bed, kitchen = house["home"], house["upstairs"], house["bedroom"], house["kitchen"]
    for zone_id in (up, bed, kitchen):
        _order(home, house["lights"][zone_id], "OFF")
    # A global item: an order with the integration away raises a system alarm (zoneId null).
    _set_simulator(home, False)
    assert home.admin.post(f"/equipments/{house['lights'][kitchen]}/orders/state", {"value": "ON"}).status_code == 503
    _set_simulator(home, True)
    everything = _items(home.admin, limit=200)
    alarms = [i for i in everything if i["category"] == "alarm"]
    assert alarms and all(i["zoneId"] is None for i in alarms)
    global_ids = {i["id"] for i in everything if i["zoneId"] is None}

    def zones_in(items):
        return {i["zoneId"] for i in items}

    upstairs = _items(home.admin, zoneId=up, limit=200)
    assert zones_in(upstairs) == {up, bed, None}
    assert global_ids <= {i["id"] for i in upstairs}
    assert zones_in(_items(home.admin, zoneId=up, includeDescendants="false", limit=200)) == {up, None}
    assert zones_in(_items(home.admin, zoneId=up, includeDescendants="true", limit=200)) == {up, bed, None}
    assert zones_in(_items(home.admin, zoneId=bed, limit=200)) == {bed, None}
    assert zones_in(_items(home.admin, zoneId=kitchen, limit=200)) == {kitchen, None}
    assert {i["category"] for i in _items(home.admin, zoneId=kitchen, limit=200) if i["zoneId"] == kitchen} == {"order"}
    failed = next(i for i in everything if i["message"]["template"] == "order.failed")
    assert failed["zoneId"] == kitchen and failed["source"]["kind"] == "manual"
    timestamps = [i["timestamp"] for i in everything]
    assert timestamps == sorted(timestamps, reverse=True)  # newest first


def test_limit_defaults_to_100_and_is_bounded_to_1_200(house):
    home = house["home"]
    root = home.admin.get("/zones").json()[0]["id"]
    n = 0
    while len(_items(home.admin, limit=200)) < 200:  # each zone order is three items, one per light
        for _ in range(20):
            n += 1
            response = home.admin.post(f"/zones/{root}/orders/{'allLightsOn' if n % 2 else 'allLightsOff'}", {})
            assert response.status_code == 200, response.text
    assert home.admin.post(f"/zones/{root}/orders/allLightsOff", {}).status_code == 200  # now surely more than 200
    assert len(_items(home.admin)) == 100
    assert len(_items(home.admin, limit=500)) == 200
    assert len(_items(home.admin, limit=0)) == 1
    assert len(_items(home.admin, limit=-4)) == 1
    assert len(_items(home.admin, limit=7)) == 7
    for bad in ("abc", "1.5", "10x"):
        response = home.admin.get("/activity", params={"limit": bad})
        assert response.status_code == 400 and "limit" in response.json()["error"], bad
    assert home.admin.get("/activity", params={"includeDescendants": "perhaps"}).status_code == 400


def test_a_standard_user_reads_the_feed_and_anonymous_callers_do_not(house):
    home = house["home"]
    _, standard = home.new_user("standard")
    assert len(_items(standard, limit=3)) == 3
    assert home.server.api().get("/activity").status_code == 401


def test_each_item_is_sent_alone_on_the_activity_topic(house):
    home = house["home"]
    _, standard = home.new_user("standard")
    ws = home.server.ws(standard.token)
    expect_welcome(ws)
    subscribe(ws, "activity", "equipments")
    collector = Collector(ws)
    try:
        _order(home, house["lights"][house["upstairs"]], "ON")
        lone = collector.wait_for(lambda c: [m for m in c.messages() if isinstance(m, dict) and m.get("type") == "activity.added"])
        assert len(lone) == 1
        message = lone[0]
        assert set(message) == {"type", "item"}
        assert message["item"] == _items(home.admin, limit=1)[0]
        assert message["item"]["zoneId"] == house["upstairs"] and message["item"]["category"] == "order"
        # the equipment events still come batched, and the activity item never rides in a batch
        collector.wait_for(lambda c: [m for m in c.messages() if isinstance(m, list)])
        assert not [e for m in collector.messages() if isinstance(m, list) for e in m if e.get("type") == "activity.added"]
    finally:
        collector.close()


def test_without_the_topic_no_activity_is_sent(house):
    home = house["home"]
    ws = home.server.ws(home.admin_pair["accessToken"])
    expect_welcome(ws)
    subscribe(ws, "equipments")
    collector = Collector(ws)
    try:
        _order(home, house["lights"][house["upstairs"]], "OFF")
        collector.wait_for(lambda c: c.events("equipment.order.executed"))
        assert not collector.events("activity.added")
    finally:
        collector.close()
