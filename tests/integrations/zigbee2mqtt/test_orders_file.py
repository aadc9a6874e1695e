"""Every order of the shared ``orders.json``, posted through the HTTP API of a real server on a real
mosquitto: each valid one reaches ``<name>/set`` exactly as the file writes it, each invalid one is
refused (a 4xx with ``{"error": ...}``) and publishes nothing. One server and one broker for the file.

Each device gets one equipment with every order of the device bound under its own key. The file's
invalid orders are posted first, then its valid ones: the set topic must then hold exactly the valid
ones, in order (the server publishes in order, so anything an invalid order sent would be there too).
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import requests

from tests import zigbee
from tests.broker import Broker, Mqtt
from tests.harness import Home, wait_for

DEVICES: dict[str, Any] = zigbee.orders()["devices"]


@pytest.fixture(scope="module")
def z2m(home: Home, tmp_path_factory: pytest.TempPathFactory) -> Iterator[zigbee.Z2m]:
    broker = Broker(tmp_path_factory.mktemp("mosquitto")).start()
    client = Mqtt(broker)
    try:
        z2m = zigbee.Z2m(home, broker, client)
        z2m.connect()
        z2m.discover()
        client.subscribe(f"{z2m.base}/#")
        yield z2m
    finally:
        client.close()
        broker.stop()


@pytest.fixture(scope="module")
def equipments(z2m: zigbee.Z2m) -> dict[str, str]:
    """Friendly name -> the id of an equipment binding every order of that device under its key."""
    zone_id = z2m.root_zone_id()
    found: dict[str, str] = {}
    for name, device in z2m.devices().items():
        equipment = zigbee.created(z2m.api.post("/equipments", {"name": name, "type": "appliance", "zoneId": zone_id}))
        for order in device["orders"]:
            zigbee.created(z2m.api.post(f"/equipments/{equipment['id']}/order-bindings", {"deviceOrderId": order["id"], "alias": order["key"]}))
        found[name] = equipment["id"]
    return found


def single_orders(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """An order of the API sets one property: a payload of several properties ("several light
    features in one message") is posted as one order per property, each published alone."""
    return list(payload.items())


def refusal_problem(response: requests.Response) -> str | None:
    """What is wrong with the answer to an invalid order (a 4xx with ``{"error": <text>}``), if anything."""
    body = response.json() if response.headers.get("Content-Type", "").startswith("application/json") else None
    if 400 <= response.status_code < 500 and isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"]:
        return None
    return f"{response.status_code} {response.text}"


@pytest.mark.parametrize("name", list(DEVICES))
def test_every_order_of_the_file(z2m, equipments, name):
    listed = DEVICES[name]
    if name in zigbee.SKIPPED:
        # Not a device we drive (unsupported, disabled, or still being interviewed): nothing to order.
        assert name not in equipments
        return
    assert listed["topic"] == f"{z2m.base}/{name}/set"
    url = f"/equipments/{equipments[name]}/orders/"
    wrong: list[str] = []
    for invalid in listed["invalid"]:
        for key, value in single_orders(invalid["payload"]):
            problem = refusal_problem(z2m.api.post(url + key, {"value": value}))
            if problem:
                wrong.append(f"invalid {key}={value!r} ({invalid['reason']}) answered {problem}")
    expected = [{key: value} for valid in listed["valid"] for key, value in single_orders(valid["payload"])]
    for order in expected:
        [(key, value)] = order.items()
        response = z2m.api.post(url + key, {"value": value})
        if response.status_code != 200 or response.json().get("value") != value:
            wrong.append(f"valid {key}={value!r} answered {response.status_code} {response.text}")
    assert not wrong, "\n".join(wrong)
    wait_for(lambda: len(z2m.client.received(listed["topic"])) >= len(expected), 5)
    assert z2m.client.received(listed["topic"]) == expected


def test_preset_names_are_listed_with_the_numeric_order(z2m, equipments):
    device_orders = {o["key"]: o for o in z2m.device("chambre_lampe_chevet")["orders"]}
    bindings = {b["alias"]: b for b in z2m.api.get(f"/equipments/{equipments['chambre_lampe_chevet']}").json()["orderBindings"]}
    for listed in (device_orders, bindings):
        color_temp = listed["color_temp"]
        assert (color_temp["type"], color_temp["min"], color_temp["max"]) == ("number", 153, 500)
        assert color_temp["enumValues"] == ["coolest", "cool", "neutral", "warm", "warmest"]
        assert listed["color_temp_startup"]["enumValues"] == ["coolest", "cool", "neutral", "warm", "warmest", "previous", 65535]
