"""The backbone over a real server, a real mosquitto and the zigbee2mqtt integration.

What automation sends reaches ``<name>/set`` within 100 ms of the message or tick that caused it,
exactly once, whatever kind of worker sends it (a recipe, a button action, a mode impact, a
calendar slot, a timed-action revert); and a stuck worker never delays device messages.

Before the workers, an order sent from a bus handler ran inside the MQTT loop: its wait for the
broker's acknowledgement could only be served by that same loop, so it timed out after 5 s, was
re-sent, and every device waited meanwhile.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from hausbox.core.clock import parse_iso
from tests.harness import wait_for
from tests.wsclient import Collector, expect_welcome, subscribe
from tests.zigbee import Z2m, created, zigbee_home

LAMP, SWITCH, BUTTON = "chambre_lampe_chevet", "chambre_interrupteur", "bureau_bouton"
WITHIN_S = 0.1
QUIET_S = 1.0  # after the first order: long enough for a re-send (2 s retry) to have started


def _set_topic(z2m: Z2m, name: str) -> str:
    return f"{z2m.base}/{name}/set"


def one_order(z2m: Z2m, name: str, since: float, timeout: float = 5.0) -> tuple[float, Any]:
    """The one order published on ``<name>/set`` after ``since`` (wall time): when, and what."""
    topic = _set_topic(z2m, name)
    first = wait_for(lambda: next(((at, p) for at, p in z2m.client.arrivals(topic) if at >= since), None), timeout)
    time.sleep(QUIET_S)
    assert [p for at, p in z2m.client.arrivals(topic) if at >= since] == [first[1]], "the order was sent more than once"
    return first


def _home(make_server, broker, mqtt_client, **kwargs: Any) -> tuple[Z2m, dict[str, Any]]:
    z2m = zigbee_home(make_server, broker, mqtt_client, **kwargs)
    return z2m, z2m.equipment("Lampe chevet", "light_dimmable", LAMP)


def test_recipe_button_and_mode_orders_reach_the_broker_within_100_ms_once(make_server, broker, mqtt_client):
    z2m, lamp = _home(make_server, broker, mqtt_client)
    api = z2m.api
    switch = z2m.equipment("Interrupteur", "button", SWITCH)
    button = z2m.equipment("Bouton", "button", BUTTON)
    created(api.post("/recipe-instances", {"recipeId": "switch-light", "params": {"zone": z2m.root_zone_id(), "buttons": [switch["id"]], "lights": [lamp["id"]]}}))
    night = created(api.post("/modes", {"name": "Nuit"}))
    impact = [{"type": "order", "equipmentId": lamp["id"], "orderAlias": "state", "value": "OFF"}]
    created(api.put(f"/modes/{night['id']}/impacts/{z2m.root_zone_id()}", {"actions": impact}))
    bindings = f"/equipments/{button['id']}/action-bindings"
    order = {"equipmentId": lamp["id"], "orderAlias": "brightness", "value": 120}
    created(api.post(bindings, {"actionValue": "single", "effectType": "equipment_order", "config": order}))
    created(api.post(bindings, {"actionValue": "double", "effectType": "mode_activate", "config": {"modeId": night["id"]}}))

    # a recipe: the switch toggles the lamp (state unknown: on)
    sent = time.time()
    z2m.publish(SWITCH, {"action": "on", "battery": 90})
    at, payload = one_order(z2m, LAMP, sent)
    assert payload == {"state": "ON"} and at - sent < WITHIN_S, (payload, at - sent)

    # a button action
    sent = time.time()
    z2m.publish(BUTTON, {"action": "single", "battery": 80})
    at, payload = one_order(z2m, LAMP, sent)
    assert payload == {"brightness": 120} and at - sent < WITHIN_S, (payload, at - sent)

    # a mode impact, activated by a button
    sent = time.time()
    z2m.publish(BUTTON, {"action": "double", "battery": 80})
    at, payload = one_order(z2m, LAMP, sent)
    assert payload == {"state": "OFF"} and at - sent < WITHIN_S, (payload, at - sent)
    assert api.get(f"/modes/{night['id']}").json()["active"] is True


SLOT = datetime(2026, 7, 1, 7, 0, tzinfo=ZoneInfo("Europe/Paris"))
LEAD_S = 8  # server start, discovery and set-up happen in these seconds of the server's clock


def test_a_calendar_slot_sends_its_mode_order_within_100_ms_of_its_time(make_server, broker, mqtt_client):
    skew_ms = int((SLOT.timestamp() - LEAD_S - time.time()) * 1000)
    z2m, lamp = _home(make_server, broker, mqtt_client, env={"TZ": "Europe/Paris", "HAUSBOX_CLOCK_SKEW_MS": str(skew_ms)})
    api = z2m.api
    morning = created(api.post("/modes", {"name": "Matin"}))
    actions = [{"type": "order", "equipmentId": lamp["id"], "orderAlias": "brightness", "value": 200}]
    created(api.put(f"/modes/{morning['id']}/impacts/{z2m.root_zone_id()}", {"actions": actions}))
    slot = created(api.post("/calendar/profiles/work/slots", {"days": [3], "time": "07:00", "modeActions": [{"modeId": morning["id"], "action": "on"}]}))
    assert slot["nextRunAt"] == "2026-07-01T05:00:00.000Z", "set-up took longer than the lead: the slot is already past"

    due = SLOT.timestamp() - skew_ms / 1000  # the slot's instant on this machine's clock
    at, payload = one_order(z2m, LAMP, since=0, timeout=LEAD_S + 5)
    assert payload == {"brightness": 200}
    assert -0.01 <= at - due < WITHIN_S, at - due


def test_a_timed_action_revert_reaches_the_broker_within_100_ms_of_its_expiry(make_server, broker, mqtt_client):
    z2m, lamp = _home(make_server, broker, mqtt_client)
    response = z2m.api.post(f"/equipments/{lamp['id']}/timed-action", {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 10_000})
    assert response.status_code == 200, response.text
    expires = parse_iso(response.json()["expiresAt"]) / 1000
    z2m.publish(LAMP, {"state": "ON"})  # the lamp reports what it was told
    at, payload = one_order(z2m, LAMP, since=expires - 1, timeout=15)
    assert payload == {"state": "OFF"}
    assert -0.01 <= at - expires < WITHIN_S, at - expires


def test_a_stuck_worker_never_delays_device_messages(make_server, broker, mqtt_client):
    # The server runs one more worker whose handler sleeps 30 s on every device value.
    z2m, lamp = _home(make_server, broker, mqtt_client, env={"RUDE_STUCK_WORKER": "1"}, module="tests.core.rude_server")
    ws = z2m.home.server.ws(z2m.home.admin_pair["accessToken"])
    expect_welcome(ws)
    subscribe(ws, "devices")
    collector = Collector(ws)
    try:
        delays = []
        for step in range(10):
            sent = time.monotonic()
            z2m.publish("salon_meteo", {"temperature": 20 + step, "humidity": 50})

            def arrived(c: Collector, value: int = 20 + step) -> Any:
                return next((at for at, m in c.timed_messages() if at >= sent and _carries(m, "temperature", value)), None)

            delays.append(collector.wait_for(arrived, timeout=2) - sent)
            time.sleep(0.1)
        assert max(delays) < 0.3, delays
        # and the other workers still act: a timed action is sent at once
        since = time.time()
        response = z2m.api.post(f"/equipments/{lamp['id']}/timed-action", {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 10_000})
        assert response.status_code == 200, response.text
        assert one_order(z2m, LAMP, since)[1] == {"state": "ON"}
    finally:
        collector.close()


def test_an_order_sent_on_the_message_path_itself_is_acknowledged_at_once(make_server, broker, mqtt_client):
    # A careless view orders the lamp inline, in the greenlet that dispatches MQTT messages: the
    # broker's acknowledgement is read by the connection's reader, which never waits on it.
    z2m, lamp = _home(make_server, broker, mqtt_client, env={"RUDE_INLINE_ORDER": "Lampe chevet"}, module="tests.core.rude_server")
    z2m.equipment("Interrupteur", "button", SWITCH)
    sent = time.time()
    z2m.publish(SWITCH, {"action": "on", "battery": 90})
    at, payload = one_order(z2m, LAMP, sent)
    assert payload == {"state": "ON"} and at - sent < WITHIN_S, (payload, at - sent)
    z2m.publish("salon_meteo", {"temperature": 23.5})
    z2m.wait_value("salon_meteo", "temperature", 23.5, timeout=1)


def _carries(message: Any, key: str, value: Any) -> bool:
    events = message if isinstance(message, list) else [message]
    return any(e.get("type") == "device.data.updated" and e.get("key") == key and e.get("value") == value for e in events)
