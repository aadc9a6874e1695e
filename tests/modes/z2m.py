"""A real server, a real mosquitto and a client playing zigbee2mqtt, with the fixture devices
discovered: the end-to-end set-up of the mode, button and calendar tests."""

from __future__ import annotations

from typing import Any

from tests.harness import Home, wait_for
from tests.integrations.zigbee2mqtt.conftest import Z2m


def zigbee_home(make_server, broker, mqtt_client, env: dict[str, str] | None = None, module: str = "hausbox") -> Z2m:
    z2m = Z2m(Home(make_server(env=env, module=module)), broker, mqtt_client)
    z2m.connect()
    z2m.discover()
    z2m.client.subscribe("zigbee2mqtt/#")
    return z2m


def created(response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def wait_sets(z2m: Z2m, name: str, count: int, timeout: float = 10.0) -> list[Any]:
    """The first ``count`` orders published on ``zigbee2mqtt/<name>/set``."""
    topic = f"{z2m.base}/{name}/set"
    return wait_for(lambda: (lambda got: got if len(got) >= count else None)(z2m.client.received(topic)), timeout)
