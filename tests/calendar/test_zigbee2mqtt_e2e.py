"""End to end: a calendar slot fires in the server's local time and its mode's orders reach
zigbee2mqtt on ``<name>/set``. The server's clock is shifted (``HAUSBOX_CLOCK_SKEW_MS``) to stand a
few seconds before the slot: Wednesday 2026-07-01 07:00 in Paris."""

from __future__ import annotations

import time
from datetime import datetime
from zoneinfo import ZoneInfo

from tests.zigbee import created, wait_sets, zigbee_home

SLOT = datetime(2026, 7, 1, 7, 0, tzinfo=ZoneInfo("Europe/Paris"))
LEAD_S = 10  # server start, discovery and set-up happen in these seconds of the server's clock


def test_a_calendar_slot_publishes_its_mode_orders(make_server, broker, mqtt_client):
    skew_ms = int((SLOT.timestamp() - LEAD_S - time.time()) * 1000)
    z2m = zigbee_home(make_server, broker, mqtt_client, env={"TZ": "Europe/Paris", "HAUSBOX_CLOCK_SKEW_MS": str(skew_ms)})
    api = z2m.api
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet")
    morning = created(api.post("/modes", {"name": "Matin"}))
    created(api.put(f"/modes/{morning['id']}/impacts/{z2m.root_zone_id()}", {"actions": [{"type": "order", "equipmentId": lamp["id"], "orderAlias": "brightness", "value": 200}]}))
    slot = created(api.post("/calendar/profiles/work/slots", {"days": [3], "time": "07:00", "modeActions": [{"modeId": morning["id"], "action": "on"}]}))
    assert slot["nextRunAt"] == "2026-07-01T05:00:00.000Z", "set-up took longer than the lead: the slot is already past"
    assert z2m.client.received("zigbee2mqtt/chambre_lampe_chevet/set") == []

    assert wait_sets(z2m, "chambre_lampe_chevet", 1, timeout=LEAD_S + 5) == [{"brightness": 200}]
    assert api.get(f"/modes/{morning['id']}").json()["active"] is True
    assert api.get("/calendar/active").json()["slots"][0]["nextRunAt"] == "2026-07-08T05:00:00.000Z"
