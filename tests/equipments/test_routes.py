"""Equipment and aggregation routes over HTTP (validation and shapes; behaviour is tested in-process)."""

from __future__ import annotations

ROOT = "00000000-0000-0000-0000-000000000001"


def test_create_read_update_delete(home):
    created = home.admin.post("/equipments", {"name": " Hall lamp ", "type": "light_onoff", "zoneId": ROOT, "icon": "lamp"})
    assert created.status_code == 201
    body = created.json()
    assert (body["name"], body["type"], body["zoneId"], body["enabled"], body["data"]) == ("Hall lamp", "light_onoff", ROOT, True, {})
    assert home.admin.get(f"/equipments/{body['id']}").json()["id"] == body["id"]
    updated = home.admin.put(f"/equipments/{body['id']}", {"name": "Porch lamp", "enabled": False}).json()
    assert updated["name"] == "Porch lamp" and updated["enabled"] is False
    assert home.admin.delete(f"/equipments/{body['id']}").status_code == 204
    assert home.admin.get(f"/equipments/{body['id']}").status_code == 404


def test_type_rules(home):
    bad = home.admin.post("/equipments", {"name": "X", "type": "toaster", "zoneId": ROOT})
    assert bad.status_code == 400 and bad.json() == {"error": "Invalid equipment type: toaster"}
    assert home.admin.post("/equipments", {"name": "X", "type": "switch", "zoneId": "nowhere"}).status_code == 404
    home.admin.post("/equipments", {"name": "Fan", "type": "switch", "zoneId": ROOT})
    assert home.admin.get("/equipments", params={"type": "toaster"}).json() == []
    switches = home.admin.get("/equipments", params={"type": "switch"}).json()
    assert switches and all(e["type"] == "switch" for e in switches)
    assert home.admin.get("/equipments", params={"role": "admin"}).status_code == 400


def test_orders_on_unknown_aliases_and_bad_bindings_are_refused(home):
    equipment = home.admin.post("/equipments", {"name": "Empty", "type": "switch", "zoneId": ROOT}).json()
    response = home.admin.post(f"/equipments/{equipment['id']}/orders/state", {"value": "ON"})
    assert response.status_code == 404 and response.json() == {"error": "Order alias not found: state"}
    assert home.admin.post(f"/equipments/{equipment['id']}/data-bindings", {"deviceDataId": "ghost", "alias": "x"}).status_code == 404
    assert home.admin.post(f"/equipments/{equipment['id']}/order-bindings", {"deviceOrderId": "ghost", "alias": "x"}).status_code == 404
    assert home.admin.delete(f"/equipments/{equipment['id']}/data-bindings/ghost").status_code == 404


def test_aggregation_lists_every_zone(home):
    zone = home.admin.post("/zones", {"name": "Cellar"}).json()
    aggregation = home.admin.get("/zones/aggregation").json()
    assert ROOT in aggregation and zone["id"] in aggregation
    for key in ("temperature", "motion", "lightsOn", "lightsTotal", "power", "waterValvesOpen", "displaysOnline"):
        assert key in aggregation[zone["id"]]
    assert set(aggregation[ROOT]) >= {"sunrise", "sunset", "isDaylight"}
