"""End to end: a standard user activates a mode over HTTP and its impacts reach zigbee2mqtt as
orders on ``<name>/set`` (real server, real mosquitto)."""

from __future__ import annotations

import time

from tests.zigbee import created, wait_sets, zigbee_home


def test_activating_a_mode_publishes_its_orders(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client)
    api = z2m.api
    root = z2m.root_zone_id()
    bedroom = created(api.post("/zones", {"name": "Chambre"}))
    spot = z2m.equipment("Spot cuisine", "light_onoff", "cuisine/spot")
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet", zone_id=bedroom["id"])
    night = created(api.post("/modes", {"name": "Nuit"}))
    created(api.put(f"/modes/{night['id']}/impacts/{root}", {"actions": [{"type": "order", "equipmentId": spot["id"], "orderAlias": "state", "value": "off"}]}))
    created(api.put(f"/modes/{night['id']}/impacts/{bedroom['id']}", {"actions": [
        {"type": "order", "equipmentId": lamp["id"], "orderAlias": "brightness", "value": 20},
        {"type": "order", "equipmentId": lamp["id"], "orderAlias": "state", "value": "ON"},
    ]}))  # fmt: skip

    _, standard = z2m.home.new_user("standard")
    assert standard.post(f"/modes/{night['id']}/activate").json() == {"ok": True, "active": True}
    assert wait_sets(z2m, "cuisine/spot", 1) == [{"state": "OFF"}]
    assert wait_sets(z2m, "chambre_lampe_chevet", 2) == [{"brightness": 20}, {"state": "ON"}]

    # Already active: nothing is sent again. Applying one zone sends that zone's orders only.
    assert standard.post(f"/modes/{night['id']}/activate").status_code == 200
    assert standard.post(f"/modes/{night['id']}/apply-to-zone/{bedroom['id']}").json() == {"ok": True, "applied": 2, "failed": 0}
    assert wait_sets(z2m, "chambre_lampe_chevet", 4)[2:] == [{"brightness": 20}, {"state": "ON"}]
    time.sleep(0.3)
    assert z2m.client.received("zigbee2mqtt/cuisine/spot/set") == [{"state": "OFF"}]
    assert api.get(f"/modes/{night['id']}").json()["state"] == "active"
