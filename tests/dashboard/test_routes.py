"""/dashboard/widgets over real HTTP: shapes, validation rules, order, access."""

from __future__ import annotations

from typing import Any

import pytest

ADMIN_REQUIRED = {"error": "Admin access required"}


@pytest.fixture(scope="module")
def place(home) -> dict[str, Any]:
    zone = home.admin.post("/zones", {"name": "Living"}).json()["id"]
    lamp = home.admin.post("/equipments", {"name": "Lamp", "type": "light_onoff", "zoneId": zone}).json()["id"]
    return {"zone": zone, "lamp": lamp}


@pytest.fixture
def clean(home):
    """Each test starts with no widget."""
    for widget in home.admin.get("/dashboard/widgets").json():
        home.admin.delete(f"/dashboard/widgets/{widget['id']}")
    return home


def _create(home, body: dict[str, Any]) -> dict[str, Any]:
    response = home.admin.post("/dashboard/widgets", body)
    assert response.status_code == 201, response.text
    return response.json()


def test_create_list_update_delete(clean, place):
    home = clean
    lamp = _create(home, {"type": "equipment", "equipmentId": place["lamp"], "label": "Lamp", "icon": "bulb", "unknown": 1})
    assert set(lamp) == {"id", "type", "equipmentId", "zoneId", "family", "label", "icon", "config", "displayOrder", "createdAt"}
    assert (lamp["type"], lamp["equipmentId"], lamp["label"], lamp["icon"], lamp["config"], lamp["displayOrder"]) == ("equipment", place["lamp"], "Lamp", "bulb", None, 0)
    lights = _create(home, {"type": "zone", "zoneId": place["zone"], "family": "lights"})
    assert (lights["zoneId"], lights["family"], lights["label"], lights["displayOrder"]) == (place["zone"], "lights", None, 1)
    assert [w["id"] for w in home.admin.get("/dashboard/widgets").json()] == [lamp["id"], lights["id"]]

    patched = home.admin.patch(f"/dashboard/widgets/{lights['id']}", {"label": "All lights", "config": {"compact": True, "n": [1, 2]}})
    assert patched.status_code == 200 and patched.json() == {**lights, "label": "All lights", "config": {"compact": True, "n": [1, 2]}}
    cleared = home.admin.patch(f"/dashboard/widgets/{lights['id']}", {"config": None, "icon": "sun"}).json()
    assert cleared["config"] is None and cleared["icon"] == "sun" and cleared["label"] == "All lights"

    assert home.admin.delete(f"/dashboard/widgets/{lamp['id']}").status_code == 204
    assert [w["id"] for w in home.admin.get("/dashboard/widgets").json()] == [lights["id"]]
    assert home.admin.delete(f"/dashboard/widgets/{lamp['id']}").status_code == 404
    assert home.admin.patch(f"/dashboard/widgets/{lamp['id']}", {"label": "x"}).status_code == 404


def test_a_patch_without_a_body_or_with_nothing_known_changes_nothing(clean, place):
    home = clean
    widget = _create(home, {"type": "equipment", "equipmentId": place["lamp"], "label": "Keep", "icon": "bulb"})
    home.admin.patch(f"/dashboard/widgets/{widget['id']}", {"config": {"x": 1}})
    widget = home.admin.get("/dashboard/widgets").json()[0]
    no_body = home.admin.request("PATCH", f"/dashboard/widgets/{widget['id']}")
    assert no_body.status_code == 200 and no_body.json() == widget
    typed_but_empty = home.admin.request("PATCH", f"/dashboard/widgets/{widget['id']}", data=b"", headers={"Content-Type": "application/json"})
    assert typed_but_empty.status_code == 200 and typed_but_empty.json() == widget
    for body in ({}, {"whatever": 3}):
        response = home.admin.patch(f"/dashboard/widgets/{widget['id']}", body)
        assert response.status_code == 200 and response.json() == widget
    assert home.admin.get("/dashboard/widgets").json() == [widget]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"type": "tile"},
        {"type": None},
        {"type": "equipment"},
        {"type": "equipment", "equipmentId": None},
        {"type": "equipment", "equipmentId": 12},
        {"type": "zone", "family": "lights"},
        {"type": "zone", "zoneId": "<zone>"},
        {"type": "zone", "zoneId": "<zone>", "family": "pool"},
        {"type": "equipment", "equipmentId": "<lamp>", "label": 42},
        {"type": "equipment", "equipmentId": "<lamp>", "label": ["a"]},
        {"type": "equipment", "equipmentId": "<lamp>", "label": "x" * 500},
        {"type": "equipment", "equipmentId": "<lamp>", "icon": {"name": "x"}},
        {"type": "equipment", "equipmentId": "<lamp>", "config": [1]},
        {"type": "equipment", "equipmentId": "<lamp>", "config": "big"},
    ],
    ids=repr,
)
def test_malformed_creations_are_refused(clean, place, body):
    filled = {k: (place["zone"] if v == "<zone>" else place["lamp"] if v == "<lamp>" else v) for k, v in body.items()}
    response = clean.admin.post("/dashboard/widgets", filled)
    assert response.status_code == 400, response.text
    assert isinstance(response.json()["error"], str)
    assert clean.admin.get("/dashboard/widgets").json() == []


def test_unknown_references_are_a_bad_request_not_a_missing_resource(clean):
    equipment = clean.admin.post("/dashboard/widgets", {"type": "equipment", "equipmentId": "no-such-equipment"})
    assert equipment.status_code == 400 and "no-such-equipment" in equipment.json()["error"]
    zone = clean.admin.post("/dashboard/widgets", {"type": "zone", "zoneId": "no-such-zone", "family": "lights"})
    assert zone.status_code == 400 and "no-such-zone" in zone.json()["error"]


def test_patch_validation(clean, place):
    widget = _create(clean, {"type": "equipment", "equipmentId": place["lamp"]})
    for body in ({"label": 5}, {"label": True}, {"icon": 3}, {"config": "x"}, {"config": [1]}):
        response = clean.admin.patch(f"/dashboard/widgets/{widget['id']}", body)
        assert response.status_code == 400, body
    assert clean.admin.request("PATCH", f"/dashboard/widgets/{widget['id']}", data=b"[]", headers={"Content-Type": "application/json"}).status_code == 400
    assert clean.admin.get("/dashboard/widgets").json() == [widget]


def test_order_must_match_the_widget_ids(clean, place):
    home = clean
    ids = [_create(home, {"type": "zone", "zoneId": place["zone"], "family": f})["id"] for f in ("lights", "shutters", "heating")]
    answer = home.admin.put("/dashboard/widgets/order", {"order": [ids[2], ids[0], ids[1]]})
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    listed = home.admin.get("/dashboard/widgets").json()
    assert [w["id"] for w in listed] == [ids[2], ids[0], ids[1]] and [w["displayOrder"] for w in listed] == [0, 1, 2]
    for order in ([], ids[:2], ids + ["extra"], [ids[0], ids[0], ids[1]], [ids[0], ids[1], "other"], [1, 2, 3], "abc", None):
        response = home.admin.put("/dashboard/widgets/order", {"order": order})
        assert response.status_code == 400, order
        assert isinstance(response.json()["error"], str)
    assert home.admin.put("/dashboard/widgets/order", {}).status_code == 400
    assert [w["id"] for w in home.admin.get("/dashboard/widgets").json()] == [ids[2], ids[0], ids[1]]


def test_widgets_of_a_deleted_equipment_or_zone_go_away(clean):
    home = clean
    zone = home.admin.post("/zones", {"name": "Attic"}).json()["id"]
    fan = home.admin.post("/equipments", {"name": "Fan", "type": "switch", "zoneId": zone}).json()["id"]
    _create(home, {"type": "equipment", "equipmentId": fan})
    zone_widget = _create(home, {"type": "zone", "zoneId": zone, "family": "sensors"})
    assert home.admin.delete(f"/equipments/{fan}").status_code == 204
    assert [w["id"] for w in home.admin.get("/dashboard/widgets").json()] == [zone_widget["id"]]
    assert home.admin.delete(f"/zones/{zone}").status_code == 204
    assert home.admin.get("/dashboard/widgets").json() == []


def test_a_standard_user_reads_but_may_not_write(clean, place):
    home = clean
    widget = _create(home, {"type": "equipment", "equipmentId": place["lamp"]})
    _, standard = home.new_user("standard")
    listed = standard.get("/dashboard/widgets")
    assert listed.status_code == 200 and listed.json() == [widget]
    refused = [
        standard.post("/dashboard/widgets", {"type": "zone", "zoneId": place["zone"], "family": "lights"}),
        standard.patch(f"/dashboard/widgets/{widget['id']}", {"label": "mine"}),
        standard.request("PATCH", f"/dashboard/widgets/{widget['id']}"),
        standard.delete(f"/dashboard/widgets/{widget['id']}"),
        standard.put("/dashboard/widgets/order", {"order": [widget["id"]]}),
        standard.post("/dashboard/widgets", data=b"{broken", headers={"Content-Type": "application/json"}),
    ]
    for response in refused:
        assert response.status_code == 403 and response.json() == ADMIN_REQUIRED
    assert home.admin.get("/dashboard/widgets").json() == [widget]
    assert home.server.api().get("/dashboard/widgets").status_code == 401
