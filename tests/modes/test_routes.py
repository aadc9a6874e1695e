"""Mode routes over HTTP: shapes, 400s naming the field, 404s, and the delegation rule (a standard
user may activate, deactivate and apply a mode, never configure one)."""

from __future__ import annotations

import pytest

ROOT = "00000000-0000-0000-0000-000000000001"
ADMIN_REQUIRED = {"error": "Admin access required"}


@pytest.fixture(scope="module")
def standard(home):
    return home.new_user("standard")[1]


def _mode(home, name="Night", **extra):
    response = home.admin.post("/modes", {"name": name, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def test_create_read_update_delete(home):
    created = _mode(home, " Night ", icon="moon", description="everyone asleep")
    assert {k: created[k] for k in ("name", "icon", "description", "active", "state", "impacts")} == {
        "name": "Night", "icon": "moon", "description": "everyone asleep", "active": False, "state": "inactive", "impacts": [],
    }  # fmt: skip
    assert created["createdAt"].endswith("Z")
    assert home.admin.get(f"/modes/{created['id']}").json() == created
    assert created["id"] in [m["id"] for m in home.admin.get("/modes").json()]
    updated = home.admin.put(f"/modes/{created['id']}", {"name": "Sleep", "description": None})
    assert updated.status_code == 200 and (updated.json()["name"], updated.json()["description"], updated.json()["icon"]) == ("Sleep", None, "moon")
    assert home.admin.delete(f"/modes/{created['id']}").status_code == 204
    assert home.admin.get(f"/modes/{created['id']}").status_code == 404
    assert home.admin.delete(f"/modes/{created['id']}").status_code == 404
    assert home.admin.put(f"/modes/{created['id']}", {"name": "X"}).status_code == 404


def test_validation_names_the_field(home):
    assert home.admin.post("/modes", {}).json() == {"error": "name is required"}
    assert home.admin.post("/modes", {"name": "  "}).json() == {"error": "name must not be empty"}
    assert home.admin.post("/modes", {"name": "x" * 101}).json() == {"error": "name must be at most 100 characters"}
    assert home.admin.post("/modes", {"name": "A", "icon": 3}).json() == {"error": "icon must be a string"}
    mode = _mode(home, "Validated")
    cases = [
        ({}, "actions is required"),
        ({"actions": {}}, "actions must be an array"),
        ({"actions": [{}]}, "actions[0].type is required"),
        ({"actions": [{"type": "scene"}]}, "actions[0].type must be one of order, recipe_toggle, recipe_params"),
        ({"actions": [{"type": "order", "equipmentId": "ghost", "orderAlias": "state", "value": "ON"}]}, "actions[0].equipmentId: equipment not found: ghost"),
        ({"actions": [{"type": "recipe_toggle", "instanceId": "ghost", "enabled": True}]}, "actions[0].instanceId: recipe instance not found: ghost"),
    ]
    for body, message in cases:
        response = home.admin.put(f"/modes/{mode['id']}/impacts/{ROOT}", body)
        assert (response.status_code, response.json()) == (400, {"error": message}), body
    lamp = home.admin.post("/equipments", {"name": "Bare lamp", "type": "light_onoff", "zoneId": ROOT}).json()
    response = home.admin.put(f"/modes/{mode['id']}/impacts/{ROOT}", {"actions": [{"type": "order", "equipmentId": lamp["id"], "orderAlias": "state", "value": "ON"}]})
    assert response.status_code == 400 and response.json()["error"] == "actions[0].orderAlias: equipment Bare lamp has no order state"


def test_impacts_and_the_zone_view(home):
    mode = _mode(home, "Away")
    zone = home.admin.post("/zones", {"name": "Garage"}).json()
    response = home.admin.put(f"/modes/{mode['id']}/impacts/{zone['id']}", {"actions": []})
    assert response.status_code == 200
    impact = response.json()
    assert (impact["modeId"], impact["zoneId"], impact["actions"]) == (mode["id"], zone["id"], [])
    assert home.admin.get(f"/modes/{mode['id']}").json()["impacts"] == [impact]
    listed = home.admin.get(f"/zones/{zone['id']}/mode-impacts").json()
    assert [(i["id"], i["modeName"], i["modeActive"]) for i in listed] == [(impact["id"], "Away", False)]
    assert home.admin.get("/zones/ghost/mode-impacts").status_code == 404
    assert home.admin.put(f"/modes/{mode['id']}/impacts/ghost", {"actions": []}).status_code == 404
    assert home.admin.put(f"/modes/ghost/impacts/{zone['id']}", {"actions": []}).status_code == 404
    assert home.admin.delete(f"/modes/{mode['id']}/impacts/{zone['id']}").status_code == 204
    assert home.admin.delete(f"/modes/{mode['id']}/impacts/{zone['id']}").status_code == 404
    assert home.admin.get(f"/zones/{zone['id']}/mode-impacts").json() == []


def test_a_standard_user_switches_modes_but_never_configures_them(home, standard):
    mode = _mode(home, "Guests")
    zone = home.admin.post("/zones", {"name": "Guest room"}).json()
    home.admin.put(f"/modes/{mode['id']}/impacts/{zone['id']}", {"actions": []})

    assert standard.get("/modes").status_code == 200
    assert standard.get(f"/modes/{mode['id']}/triggers").status_code == 200
    assert standard.get(f"/zones/{zone['id']}/mode-impacts").status_code == 200
    for method, path, body in [
        ("POST", "/modes", {"name": "Mine"}),
        ("PUT", f"/modes/{mode['id']}", {"name": "Mine"}),
        ("DELETE", f"/modes/{mode['id']}", None),
        ("PUT", f"/modes/{mode['id']}/impacts/{zone['id']}", {"actions": []}),
        ("DELETE", f"/modes/{mode['id']}/impacts/{zone['id']}", None),
    ]:
        response = standard.request(method, path, body)
        assert (response.status_code, response.json()) == (403, ADMIN_REQUIRED), (method, path)

    activated = standard.post(f"/modes/{mode['id']}/activate")
    assert (activated.status_code, activated.json()) == (200, {"ok": True, "active": True})
    assert standard.post(f"/modes/{mode['id']}/activate").status_code == 200  # idempotent
    assert home.admin.get(f"/modes/{mode['id']}").json()["state"] == "active"
    applied = standard.post(f"/modes/{mode['id']}/apply-to-zone/{zone['id']}")
    assert (applied.status_code, applied.json()) == (200, {"ok": True, "applied": 0, "failed": 0})
    assert standard.post(f"/modes/{mode['id']}/deactivate").json() == {"ok": True, "active": False}
    assert standard.post(f"/modes/{mode['id']}/deactivate").status_code == 200
    assert home.admin.get(f"/modes/{mode['id']}").json()["active"] is False

    for path in ("/modes/ghost/activate", "/modes/ghost/deactivate", f"/modes/ghost/apply-to-zone/{zone['id']}", f"/modes/{mode['id']}/apply-to-zone/ghost", f"/modes/{mode['id']}/apply-to-zone/{ROOT}"):
        assert standard.post(path).status_code == 404, path


def test_triggers_list_the_button_bindings_of_a_mode(home):
    mode, other = _mode(home, "Cinema"), _mode(home, "Reading")
    button = home.admin.post("/equipments", {"name": "Remote", "type": "button", "zoneId": ROOT}).json()
    bound = home.admin.post(f"/equipments/{button['id']}/action-bindings", {"actionValue": "single", "effectType": "mode_toggle", "config": {"modeAId": mode["id"], "modeBId": other["id"]}})
    assert bound.status_code == 201, bound.text
    triggers = home.admin.get(f"/modes/{other['id']}/triggers").json()
    assert [(t["id"], t["equipmentId"], t["equipmentName"], t["effectType"]) for t in triggers] == [(bound.json()["id"], button["id"], "Remote", "mode_toggle")]
    assert home.admin.get("/modes/ghost/triggers").status_code == 404
