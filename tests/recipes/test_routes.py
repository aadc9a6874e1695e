"""The recipe routes over real HTTP: definitions, instance CRUD, enable/disable, actions, log, access.

Devices come from the built-in simulator (one room, no periodic messages): its lights answer orders.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import wait_for

MISSING = "00000000-0000-4000-8000-00000000dead"


@pytest.fixture(scope="module")
def sim(home):
    api = home.admin
    assert api.put("/settings", {"integration.simulator.enabled": True, "integration.simulator.rooms": 1, "integration.simulator.message_rate": 0}).status_code == 200

    def devices() -> dict[str, Any]:
        return {d["sourceDeviceId"]: d for d in api.get("/devices").json() if d["integrationId"] == "simulator"}

    found = wait_for(lambda: (lambda d: d if "sim-salon-light-1" in d and "sim-salon-motion-1" in d else None)(devices()), timeout=10)
    root = api.get("/zones").json()[0]["id"]

    def equipment(name: str, kind: str, source: str) -> str:
        created = api.post("/equipments", {"name": name, "type": kind, "zoneId": root, "deviceIds": [found[source]["id"]]})
        assert created.status_code == 201, created.text
        return created.json()["id"]

    return {
        "home": home, "zone": root,
        "light": equipment("Salon light", "light_onoff", "sim-salon-light-1"),
        "motion": equipment("Salon motion", "sensor", "sim-salon-motion-1"),
        "thermostat": equipment("Thermostat", "thermostat", "sim-thermostat"),
    }  # fmt: skip


def test_definitions(home):
    listed = home.admin.get("/recipes")
    assert listed.status_code == 200
    builtins = {
        "motion-light", "motion-light-dimmable", "switch-light", "state-watch", "presence-thermostat", "presence-heater",
        "pool-pump-schedule", "freecooling", "auto-watering",
    }  # fmt: skip
    assert builtins <= {r["id"] for r in listed.json()}
    texts = {r["id"]: r["i18n"] for r in listed.json()}
    assert (texts["freecooling"]["en"]["name"], texts["auto-watering"]["fr"]["name"]) == ("Free cooling", "Arrosage automatique")
    assert texts["auto-watering"]["fr"]["slots"]["slots"]["name"] == "Arrosages" and texts["freecooling"]["fr"]["slots"]["offsetMinutes"]["name"]
    one = home.admin.get("/recipes/motion-light").json()
    assert one["recipeId"] == "motion-light" and one["i18n"]["fr"]["name"] and one["slots"][0]["id"] == "zone"
    missing = home.admin.get("/recipes/nope")
    assert missing.status_code == 404 and missing.json() == {"error": "Recipe not found: nope"}


def test_create_list_update_enable_disable_delete(sim):
    api = sim["home"].admin
    body = {"recipeId": "motion-light", "params": {"zone": sim["zone"], "lights": [sim["light"]], "timeout": "10m"}}
    created = api.post("/recipe-instances", body)
    assert created.status_code == 201, created.text
    instance = created.json()
    assert instance["recipeId"] == "motion-light" and instance["enabled"] is True and instance["running"] is True
    assert instance["params"] == body["params"]
    iid = instance["id"]
    assert iid in {i["id"] for i in api.get("/recipe-instances").json()}

    updated = api.put(f"/recipe-instances/{iid}", {"params": {**body["params"], "timeout": "2m"}})
    assert updated.status_code == 200 and updated.json()["params"]["timeout"] == "2m"
    refused = api.put(f"/recipe-instances/{iid}", {"params": {**body["params"], "timeout": "soon"}})
    assert refused.status_code == 400 and refused.json() == {"error": "Invalid params: timeout: must be a duration like 10m"}

    assert api.post(f"/recipe-instances/{iid}/disable").json() == {"success": True}
    assert api.get("/recipe-instances").json()[-1]["enabled"] is False
    stopped = api.post(f"/recipe-instances/{iid}/actions", {"action": "anything"})
    assert stopped.status_code == 400 and stopped.json() == {"error": "Instance not running"}
    assert api.post(f"/recipe-instances/{iid}/enable").json() == {"success": True}
    no_actions = api.post(f"/recipe-instances/{iid}/actions", {"action": "anything"})
    assert no_actions.status_code == 400

    log = api.get(f"/recipe-instances/{iid}/log")
    assert log.status_code == 200
    messages = [e["message"] for e in log.json()]
    assert messages[-1] == "Instance created" and "Instance disabled" in messages
    assert len(api.get(f"/recipe-instances/{iid}/log?limit=2").json()) == 2
    assert api.get(f"/recipe-instances/{iid}/log?limit=x").status_code == 400

    assert api.delete(f"/recipe-instances/{iid}").status_code == 204
    assert iid not in {i["id"] for i in api.get("/recipe-instances").json()}
    assert api.delete(f"/recipe-instances/{iid}").status_code == 404


def test_an_action_reaches_a_running_instance(sim):
    api = sim["home"].admin
    created = api.post("/recipe-instances", {"recipeId": "presence-thermostat", "params": {"zone": sim["zone"], "thermostat": sim["thermostat"]}})
    assert created.status_code == 201, created.text
    iid = created.json()["id"]
    answer = api.post(f"/recipe-instances/{iid}/actions", {"action": "set_mode", "payload": {"mode": "comfort"}})
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    state = next(i for i in api.get("/recipe-instances").json() if i["id"] == iid)["state"]
    assert state["currentMode"] == "comfort"
    bad = api.post(f"/recipe-instances/{iid}/actions", {"action": "set_mode", "payload": {"mode": "sauna"}})
    assert bad.status_code == 400 and "mode" in bad.json()["error"]
    assert api.delete(f"/recipe-instances/{iid}").status_code == 204


def test_bad_params_are_400s_naming_the_param(sim):
    api = sim["home"].admin
    cases = [
        ({"recipeId": "motion-light", "params": {"lights": [sim["light"]]}}, "Invalid params: zone: is required"),
        ({"recipeId": "motion-light", "params": {"zone": sim["zone"], "lights": [sim["light"]], "timeout": 12.5e99}}, "Invalid params: timeout: must be at most 31 days"),
        ({"recipeId": "motion-light", "params": {"zone": sim["zone"], "lights": [sim["motion"]]}}, "Invalid params: lights[0]: must be an equipment of type light_onoff or light_dimmable or light_color (Salon motion is a sensor)"),
        ({"recipeId": "motion-light", "params": {"zone": sim["zone"], "lights": [sim["light"]], "luxThreshold": "dark"}}, "Invalid params: luxThreshold: must be a number"),
        ({"recipeId": "motion-light", "params": {"zone": sim["zone"], "lights": ["nope"]}}, "Invalid params: lights[0]: equipment not found: nope"),
        ({"recipeId": "motion-light", "params": "zone"}, "params must be an object"),
        ({"params": {}}, "recipeId is required"),
    ]
    for body, message in cases:
        response = api.post("/recipe-instances", body)
        assert response.status_code == 400, (body, response.text)
        if message:
            assert response.json() == {"error": message}
    unknown = api.post("/recipe-instances", {"recipeId": "nope", "params": {}})
    assert unknown.status_code == 404 and unknown.json() == {"error": "Recipe not found: nope"}


def test_unknown_instances_are_404s(home):
    api = home.admin
    for method, path, body in (
        ("PUT", "", {"params": {}}), ("DELETE", "", None), ("POST", "/enable", None), ("POST", "/disable", None),
        ("POST", "/actions", {"action": "x"}), ("GET", "/log", None),
    ):  # fmt: skip
        response = api.request(method, f"/recipe-instances/{MISSING}{path}", body)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json() == {"error": f"Recipe instance not found: {MISSING}"}


def test_standard_users_read_but_do_not_write(sim):
    home = sim["home"]
    _, standard = home.new_user("standard")
    assert standard.get("/recipes").status_code == 200
    assert standard.get("/recipe-instances").status_code == 200
    denied = standard.post("/recipe-instances", {"recipeId": "motion-light", "params": {}})
    assert denied.status_code == 403 and denied.json() == {"error": "Admin access required"}
    assert standard.post(f"/recipe-instances/{MISSING}/enable").status_code == 403
    assert standard.delete(f"/recipe-instances/{MISSING}").status_code == 403
