"""Button action binding routes over HTTP: CRUD, 400s naming the field, 404s, admin-only writes."""

from __future__ import annotations

import pytest

ROOT = "00000000-0000-0000-0000-000000000001"
ADMIN_REQUIRED = {"error": "Admin access required"}


@pytest.fixture(scope="module")
def standard(home):
    return home.new_user("standard")[1]


@pytest.fixture(scope="module")
def button(home):
    return home.admin.post("/equipments", {"name": "Remote", "type": "button", "zoneId": ROOT}).json()


@pytest.fixture(scope="module")
def modes(home):
    return [home.admin.post("/modes", {"name": name}).json()["id"] for name in ("Day", "Night")]


def test_crud(home, button, modes):
    path = f"/equipments/{button['id']}/action-bindings"
    created = home.admin.post(path, {"actionValue": " single ", "effectType": "mode_activate", "config": {"modeId": modes[0], "extra": 1}})
    assert created.status_code == 201, created.text
    binding = created.json()
    assert (binding["equipmentId"], binding["actionValue"], binding["effectType"], binding["config"]) == (button["id"], "single", "mode_activate", {"modeId": modes[0]})
    zone = home.admin.post(path, {"actionValue": "hold", "effectType": "zone_order", "config": {"zoneId": ROOT, "orderKey": "allLightsOff"}})
    assert zone.status_code == 201 and zone.json()["config"] == {"zoneId": ROOT, "orderKey": "allLightsOff"}
    assert [b["id"] for b in home.admin.get(path).json()] == [binding["id"], zone.json()["id"]]

    updated = home.admin.put(f"{path}/{binding['id']}", {"effectType": "mode_toggle", "config": {"modeAId": modes[0], "modeBId": modes[1]}})
    assert updated.status_code == 200
    assert (updated.json()["actionValue"], updated.json()["effectType"], updated.json()["config"]) == ("single", "mode_toggle", {"modeAId": modes[0], "modeBId": modes[1]})
    assert home.admin.put(f"{path}/{binding['id']}", {"actionValue": "double"}).json()["actionValue"] == "double"
    assert home.admin.delete(f"{path}/{binding['id']}").status_code == 204
    assert home.admin.delete(f"{path}/{binding['id']}").status_code == 404
    assert home.admin.put(f"{path}/{binding['id']}", {"actionValue": "x"}).status_code == 404
    assert [b["id"] for b in home.admin.get(path).json()] == [zone.json()["id"]]


def test_validation_names_the_field(home, button, modes):
    path = f"/equipments/{button['id']}/action-bindings"
    cases = [
        ({"effectType": "mode_activate", "config": {"modeId": modes[0]}}, "actionValue is required"),
        ({"actionValue": "", "effectType": "mode_activate", "config": {"modeId": modes[0]}}, "actionValue must not be empty"),
        ({"actionValue": "single"}, "effectType is required"),
        ({"actionValue": "single", "effectType": "scene", "config": {}}, "effectType must be one of mode_activate, mode_toggle, equipment_order, recipe_toggle, zone_order"),
        ({"actionValue": "single", "effectType": "mode_activate", "config": []}, "config must be an object"),
        ({"actionValue": "single", "effectType": "mode_activate"}, "config is required"),
        ({"actionValue": "single", "effectType": "mode_activate", "config": {}}, "config.modeId is required"),
        ({"actionValue": "single", "effectType": "mode_activate", "config": {"modeId": "ghost"}}, "config.modeId: mode not found: ghost"),
        ({"actionValue": "single", "effectType": "mode_toggle", "config": {"modeAId": modes[0], "modeBId": "ghost"}}, "config.modeBId: mode not found: ghost"),
        ({"actionValue": "single", "effectType": "equipment_order", "config": {"equipmentId": button["id"], "orderAlias": "state", "value": "ON"}}, "config.orderAlias: equipment Remote has no order state"),
        ({"actionValue": "single", "effectType": "equipment_order", "config": {"equipmentId": "ghost", "orderAlias": "state", "value": "ON"}}, "config.equipmentId: equipment not found: ghost"),
        ({"actionValue": "single", "effectType": "recipe_toggle", "config": {"instanceId": "ghost", "enabled": True}}, "config.instanceId: recipe instance not found: ghost"),
        ({"actionValue": "single", "effectType": "zone_order", "config": {"zoneId": "ghost", "orderKey": "allLightsOn"}}, "config.zoneId: zone not found: ghost"),
        ({"actionValue": "single", "effectType": "zone_order", "config": {"zoneId": ROOT}}, "config.orderKey is required"),
    ]
    for body, message in cases:
        response = home.admin.post(path, body)
        assert (response.status_code, response.json()) == (400, {"error": message}), body
    assert home.admin.get(path).json() == [] or all(b["actionValue"] != "single" for b in home.admin.get(path).json())
    ghost = "/equipments/ghost/action-bindings"
    assert home.admin.get(ghost).status_code == 404
    assert home.admin.post(ghost, {"actionValue": "single", "effectType": "mode_activate", "config": {"modeId": modes[0]}}).status_code == 404
    assert home.admin.put(f"{ghost}/x", {"actionValue": "x"}).status_code == 404
    assert home.admin.delete(f"{ghost}/x").status_code == 404


def test_a_standard_user_reads_bindings_but_never_writes_them(home, standard, button, modes):
    path = f"/equipments/{button['id']}/action-bindings"
    binding = home.admin.post(path, {"actionValue": "triple", "effectType": "mode_activate", "config": {"modeId": modes[1]}}).json()
    assert standard.get(path).status_code == 200
    for method, target, body in [
        ("POST", path, {"actionValue": "x", "effectType": "mode_activate", "config": {"modeId": modes[0]}}),
        ("PUT", f"{path}/{binding['id']}", {"actionValue": "x"}),
        ("DELETE", f"{path}/{binding['id']}", None),
    ]:
        response = standard.request(method, target, body)
        assert (response.status_code, response.json()) == (403, ADMIN_REQUIRED), (method, target)


def test_bindings_go_with_their_equipment(home, modes):
    other = home.admin.post("/equipments", {"name": "Spare remote", "type": "button", "zoneId": ROOT}).json()
    home.admin.post(f"/equipments/{other['id']}/action-bindings", {"actionValue": "single", "effectType": "mode_activate", "config": {"modeId": modes[0]}})
    assert any(t["equipmentId"] == other["id"] for t in home.admin.get(f"/modes/{modes[0]}/triggers").json())
    assert home.admin.delete(f"/equipments/{other['id']}").status_code == 204
    assert not any(t["equipmentId"] == other["id"] for t in home.admin.get(f"/modes/{modes[0]}/triggers").json())
