"""GET /system/mode and the takeover: normal, inert (a database from another instance), shadow.

"Another instance" is made the way it happens on a box: the database stays, the deployment's
marker (``instance.json``, never in a backup) is a different one, as after a restore onto a new
box. An inert or shadow instance still shows the house (the simulator connects and reports), but
nothing goes towards it: an order is refused with a 503 until the takeover applies at the next start.
"""

from __future__ import annotations

import json
import uuid

from tests.harness import Home, wait_for

SIM = "integration.simulator."


def _simulator(home: Home) -> dict:
    return next(i for i in home.admin.get("/integrations").json() if i["id"] == "simulator")


def _configure_simulator(home: Home) -> None:
    values = {SIM + "enabled": True, SIM + "rooms": 1, SIM + "seed": 3, SIM + "message_rate": 0}
    assert home.admin.put("/settings", values).status_code == 200


def _simulated_light(home: Home) -> str:
    """An equipment on the simulator's first light (the simulator connected)."""
    wait_for(lambda: _simulator(home)["status"] == "connected", timeout=10)
    device = next(d for d in home.admin.get("/devices").json() if d["integrationId"] == "simulator" and d["sourceDeviceId"].endswith("light-1"))
    zone = home.admin.post("/zones", {"name": "Salon"}).json()["id"]
    created = home.admin.post("/equipments", {"name": "Light", "type": "light_onoff", "zoneId": zone, "deviceIds": [device["id"]]})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def _order(home: Home, light: str):
    return home.admin.post(f"/equipments/{light}/orders/state", {"value": "ON"})


def _marker(server) -> str:
    return json.loads((server.data_dir / "instance.json").read_text())["instanceId"]


def _become_another_box(server) -> str:
    """Keep the database, give the deployment a new marker: a restored database on another box."""
    server.stop()
    other = str(uuid.uuid4())
    (server.data_dir / "instance.json").write_text(json.dumps({"instanceId": other}))
    return other


def test_mode_is_normal_by_default_for_any_user(home):
    _, standard = home.new_user("standard")
    for api in (home.admin, standard):
        response = api.get("/system/mode")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["mode"] == "normal" and body["takeoverPending"] is False and body["banner"] is False
        assert body["instanceId"] == body["databaseInstanceId"] == _marker(home.server)
        assert body["held"] == [] and body["restartRequired"] is False
    assert home.server.api().get("/system/mode").status_code == 401
    assert home.admin.post("/system/mode/takeover").status_code == 409  # nothing to take over


def test_the_marker_is_private_and_stable_across_restarts(make_server):
    server = make_server()
    home = Home(server)
    first = _marker(server)
    assert (server.data_dir / "instance.json").stat().st_mode & 0o077 == 0
    server.restart()
    assert _marker(server) == first
    assert home.admin.get("/system/mode").json()["mode"] == "normal"


def test_a_database_from_another_instance_is_inert_until_an_admin_takes_over(make_server):
    server = make_server()
    home = Home(server)
    _configure_simulator(home)
    light = _simulated_light(home)
    assert _order(home, light).status_code == 200
    original = _marker(server)
    other = _become_another_box(server)
    server.start()

    mode = home.admin.get("/system/mode").json()
    assert mode["mode"] == "inert" and mode["takeoverPending"] is True and mode["banner"] is True
    assert mode["instanceId"] == other and mode["databaseInstanceId"] == original
    assert any("inert" in reason for reason in mode["held"])
    wait_for(lambda: _simulator(home)["status"] == "connected", timeout=10)  # the house is shown
    refused = _order(home, light)  # but not driven
    assert refused.status_code == 503 and "held" in refused.json()["error"] and "inert" in refused.json()["error"]

    _, standard = home.new_user("standard")
    assert standard.post("/system/mode/takeover").status_code == 403
    confirmed = home.admin.post("/system/mode/takeover")
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["takeoverPending"] is False and confirmed.json()["restartRequired"] is True
    assert confirmed.json()["banner"] is False
    assert home.admin.post("/system/mode/takeover").status_code == 409  # already confirmed

    server.restart()
    mode = home.admin.get("/system/mode").json()
    assert mode["mode"] == "normal" and mode["databaseInstanceId"] == other and mode["held"] == []
    wait_for(lambda: _simulator(home)["status"] == "connected", timeout=10)
    assert _order(home, light).status_code == 200


def test_service_takeover_claims_the_database_at_start(make_server):
    server = make_server()
    home = Home(server)
    other = _become_another_box(server)
    server.extra_env["SERVICE_TAKEOVER"] = "1"
    server.start()
    mode = home.admin.get("/system/mode").json()
    assert mode["mode"] == "normal" and mode["databaseInstanceId"] == other and mode["takeoverPending"] is False


def test_shadow_mode_holds_everything_and_never_takes_over(make_server):
    server = make_server()
    home = Home(server)
    _configure_simulator(home)
    light = _simulated_light(home)
    server.stop()
    server.extra_env.update({"SERVICE_SHADOW_MODE": "1", "SERVICE_TAKEOVER": "1"})  # shadow wins
    server.start()
    mode = home.admin.get("/system/mode").json()
    assert mode["mode"] == "shadow" and mode["takeoverPending"] is True and mode["banner"] is False
    assert mode["held"] == ["shadow mode"]
    wait_for(lambda: _simulator(home)["status"] == "connected", timeout=10)
    refused = _order(home, light)
    assert refused.status_code == 503 and "shadow mode" in refused.json()["error"]
    refused = home.admin.post("/system/mode/takeover")
    assert refused.status_code == 409 and "shadow" in refused.json()["error"]
