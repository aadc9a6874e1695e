"""Timed actions end to end: a real server, a real mosquitto, the zigbee2mqtt integration.

(spec, States: Timed action: the action is sent at once; the revert at expiry; persisted, so it
survives a restart.) Each test waits out one 10 s slot, the shortest the Limits allow.
"""

from __future__ import annotations

import json
import time
from typing import Any

from hausbox.core.clock import parse_iso
from tests.harness import wait_for

LAMP = "chambre_lampe_chevet"
SET_TOPIC = f"zigbee2mqtt/{LAMP}/set"
ACTION = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 10_000}
EARLY_S, LATE_S = 0.05, 2.0  # how far from expiresAt the revert may land


class Stamped:
    """What arrives on the lamp's set topic, with the wall time it arrived at."""

    def __init__(self, z2m: Any):
        self.seen: list[tuple[float, Any]] = []
        client = z2m.client.client
        inner = client.on_message

        def on_message(c: Any, userdata: Any, message: Any) -> None:
            inner(c, userdata, message)
            if message.topic == SET_TOPIC:
                self.seen.append((time.time(), json.loads(message.payload)))

        client.on_message = on_message
        z2m.client.subscribe(SET_TOPIC)

    def payloads(self) -> list[Any]:
        return [payload for _, payload in self.seen]

    def arrival(self, payload: Any, timeout: float) -> float:
        return wait_for(lambda: next((at for at, p in self.seen if p == payload), None), timeout)


def _lamp(z2m: Any) -> dict[str, Any]:
    z2m.connect()
    z2m.discover()
    return z2m.equipment("Lampe chevet", "light_dimmable", LAMP)


def test_a_timed_action_sends_the_order_at_once_and_the_revert_after_10_s(z2m):
    lamp = _lamp(z2m)
    stamped = Stamped(z2m)
    asked = time.time()
    response = z2m.api.post(f"/equipments/{lamp['id']}/timed-action", ACTION)
    assert response.status_code == 200, response.text
    armed = response.json()
    expires = parse_iso(armed["expiresAt"]) / 1000
    assert abs(expires - asked - 10) < 1.0
    assert stamped.arrival({"state": "ON"}, timeout=2) - asked < 1.0
    assert z2m.api.get(f"/equipments/{lamp['id']}").json()["timedAction"]["expiresAt"] == armed["expiresAt"]

    reverted = stamped.arrival({"state": "OFF"}, timeout=10 + LATE_S + 1)
    assert expires - EARLY_S <= reverted <= expires + LATE_S, (reverted - expires)
    assert stamped.payloads() == [{"state": "ON"}, {"state": "OFF"}]
    assert "timedAction" not in z2m.api.get(f"/equipments/{lamp['id']}").json()


def test_a_timed_action_armed_before_a_restart_reverts_after_it_at_the_right_time(z2m):
    lamp = _lamp(z2m)
    stamped = Stamped(z2m)
    response = z2m.api.post(f"/equipments/{lamp['id']}/timed-action", ACTION)
    assert response.status_code == 200, response.text
    armed = response.json()
    expires = parse_iso(armed["expiresAt"]) / 1000
    stamped.arrival({"state": "ON"}, timeout=2)

    server = z2m.home.server
    assert server.stop() == 0
    server.start()
    assert time.time() < expires - 1, "the restart must end before the deadline for this test to mean anything"
    assert z2m.api.get(f"/equipments/{lamp['id']}").json()["timedAction"] == armed  # persisted as it was
    reverted = stamped.arrival({"state": "OFF"}, timeout=expires - time.time() + LATE_S + 1)
    assert expires - EARLY_S <= reverted <= expires + LATE_S, (reverted - expires)
    assert stamped.payloads() == [{"state": "ON"}, {"state": "OFF"}], "sent once, neither lost nor doubled by the restart"
    assert "timedAction" not in z2m.api.get(f"/equipments/{lamp['id']}").json()
