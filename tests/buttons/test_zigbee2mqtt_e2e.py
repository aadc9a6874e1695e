"""End to end: a button press published by zigbee2mqtt (an ``action`` state message) runs its
bindings, whose orders reach zigbee2mqtt on ``<name>/set`` (real server, real mosquitto)."""

from __future__ import annotations

from tests.harness import wait_for
from tests.zigbee import created, wait_sets, zigbee_home


def test_button_presses_publish_orders(make_server, broker, mqtt_client):
    z2m = zigbee_home(make_server, broker, mqtt_client)
    api = z2m.api
    button = z2m.equipment("Bouton bureau", "button", "bureau_bouton")
    lamp = z2m.equipment("Lampe chevet", "light_dimmable", "chambre_lampe_chevet")
    spot = z2m.equipment("Spot cuisine", "light_onoff", "cuisine/spot")
    away = created(api.post("/modes", {"name": "Absent"}))
    created(api.put(f"/modes/{away['id']}/impacts/{z2m.root_zone_id()}", {"actions": [{"type": "order", "equipmentId": spot["id"], "orderAlias": "state", "value": "OFF"}]}))
    bindings = f"/equipments/{button['id']}/action-bindings"
    created(api.post(bindings, {"actionValue": "single", "effectType": "equipment_order", "config": {"equipmentId": lamp["id"], "orderAlias": "state", "value": "TOGGLE"}}))
    created(api.post(bindings, {"actionValue": "double", "effectType": "mode_activate", "config": {"modeId": away["id"]}}))

    # Two identical presses: each one arrives (action is a retrigger category) and toggles.
    z2m.publish("bureau_bouton", {"action": "single", "battery": 100, "linkquality": 61})
    assert wait_sets(z2m, "chambre_lampe_chevet", 1) == [{"state": "TOGGLE"}]
    z2m.publish("bureau_bouton", {"action": "single", "battery": 100, "linkquality": 60})
    assert wait_sets(z2m, "chambre_lampe_chevet", 2) == [{"state": "TOGGLE"}, {"state": "TOGGLE"}]

    z2m.publish("bureau_bouton", {"action": "hold"})  # no binding
    z2m.publish("bureau_bouton", {"action": "double"})
    assert wait_sets(z2m, "cuisine/spot", 1) == [{"state": "OFF"}]
    wait_for(lambda: api.get(f"/modes/{away['id']}").json()["active"])
    assert len(z2m.client.received("zigbee2mqtt/chambre_lampe_chevet/set")) == 2
