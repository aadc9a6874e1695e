"""Zone tree CRUD over HTTP: the root always exists, no cycles, only empty leaves are deleted."""

from __future__ import annotations

ROOT = "00000000-0000-0000-0000-000000000001"


def _create(api, name, parent=None, **extra):
    body = {"name": name, **extra}
    if parent:
        body["parentId"] = parent
    response = api.post("/zones", body)
    assert response.status_code == 201, response.text
    return response.json()


def test_the_root_exists_and_new_zones_hang_under_it(home):
    tree = home.admin.get("/zones").json()
    assert len(tree) == 1 and tree[0]["id"] == ROOT and tree[0]["parentId"] is None
    floor = _create(home.admin, "Ground floor")
    assert floor["parentId"] == ROOT
    room = _create(home.admin, "Kitchen", floor["id"], icon="chef", description="cooking")
    one = home.admin.get(f"/zones/{floor['id']}").json()
    assert [c["id"] for c in one["children"]] == [room["id"]]
    assert one["children"][0]["children"] == []
    tree = home.admin.get("/zones").json()
    names = [c["name"] for c in tree[0]["children"]]
    assert "Ground floor" in names


def test_a_cycle_is_refused_and_changes_nothing(home):
    a = _create(home.admin, "A")
    b = _create(home.admin, "B", a["id"])
    c = _create(home.admin, "C", b["id"])
    for target in (a["id"], c["id"]):
        response = home.admin.put(f"/zones/{a['id']}", {"parentId": target})
        assert response.status_code == 400 and "descendants" in response.json()["error"]
    assert home.admin.get(f"/zones/{a['id']}").json()["parentId"] == ROOT
    assert home.admin.put(f"/zones/{c['id']}", {"parentId": a["id"]}).json()["parentId"] == a["id"]


def test_only_an_empty_leaf_can_be_deleted(home):
    parent = _create(home.admin, "Upstairs")
    child = _create(home.admin, "Bedroom", parent["id"])
    response = home.admin.delete(f"/zones/{parent['id']}")
    assert response.status_code == 400 and "child" in response.json()["error"]
    equipment = home.admin.post("/equipments", {"name": "Lamp", "type": "light_onoff", "zoneId": child["id"]})
    assert equipment.status_code == 201, equipment.text
    response = home.admin.delete(f"/zones/{child['id']}")
    assert response.status_code == 400 and "equipments" in response.json()["error"]
    assert home.admin.delete(f"/equipments/{equipment.json()['id']}").status_code == 204
    assert home.admin.delete(f"/zones/{child['id']}").status_code == 204
    assert home.admin.delete(f"/zones/{parent['id']}").status_code == 204
    assert home.admin.delete(f"/zones/{ROOT}").status_code == 400
    assert home.admin.get(f"/zones/{parent['id']}").status_code == 404


def test_siblings_are_reordered(home):
    parent = _create(home.admin, "Garden")
    ids = [_create(home.admin, name, parent["id"])["id"] for name in ("Pond", "Lawn", "Shed")]
    wanted = [ids[2], ids[0], ids[1]]
    assert home.admin.put("/zones/reorder", {"parentId": parent["id"], "orderedIds": wanted}).status_code == 204
    children = home.admin.get(f"/zones/{parent['id']}").json()["children"]
    assert [c["id"] for c in children] == wanted
    assert [c["displayOrder"] for c in children] == [0, 1, 2]
    stranger = _create(home.admin, "Elsewhere")
    response = home.admin.put("/zones/reorder", {"parentId": parent["id"], "orderedIds": [stranger["id"]]})
    assert response.status_code == 400


def test_bad_input_is_refused(home):
    assert home.admin.post("/zones", {"name": ""}).status_code == 400
    assert home.admin.post("/zones", {"name": "x" * 101}).status_code == 400
    assert home.admin.post("/zones", {"name": "Orphan", "parentId": "nope"}).status_code == 404
    assert home.admin.put("/zones/nope", {"name": "x"}).status_code == 404


def test_zone_events_reach_the_websocket(home):
    import json

    from tests.wsclient import subscribe

    ws = home.server.ws(home.admin.token)
    ws.recv()
    subscribe(ws, "zones")  # and let the hub take it in: a zone created before would not be sent
    zone = _create(home.admin, "Attic")
    seen = []
    while not any(e.get("type") == "zone.created" for e in seen):
        seen += json.loads(ws.recv())
    created = next(e for e in seen if e["type"] == "zone.created")
    assert created["zone"]["id"] == zone["id"]
    ws.close()
