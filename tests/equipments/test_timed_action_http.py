"""Timed action routes over real HTTP: validation, 404, 409, 400 TimedCommandNotEligible, the allowlist.

(spec: Endpoints: Timed action; Errors; Limits: timed action duration; Authentication 7.)
The arming itself is covered in process (test_timed_actions.py) and end to end over MQTT
(tests/integrations/zigbee2mqtt/test_timed_action.py).
"""

from __future__ import annotations

import pytest

ACTION = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 60_000}


@pytest.fixture(scope="module")
def bare(home):
    """An equipment with no binding at all (the server has no integration configured)."""
    zone = home.admin.post("/zones", {"name": "Timed"}).json()
    created = home.admin.post("/equipments", {"name": "Bare light", "type": "light_onoff", "zoneId": zone["id"]})
    assert created.status_code == 201, created.text
    return created.json()


@pytest.fixture(scope="module")
def standard(home):
    return home.new_user("standard")[1]


def test_an_empty_body_without_a_configured_command_is_409(home, bare):
    response = home.admin.post(f"/equipments/{bare['id']}/timed-action", {})
    assert response.status_code == 409 and response.json()["error"]
    assert home.admin.post(f"/equipments/{bare['id']}/timed-action").status_code == 409  # no body at all


def test_an_equipment_lacking_the_order_or_a_state_measure_is_400_with_the_code(home, bare):
    response = home.admin.post(f"/equipments/{bare['id']}/timed-action", ACTION)
    assert response.status_code == 400
    assert response.json()["code"] == "TimedCommandNotEligible" and response.json()["error"]


def test_delete_with_nothing_armed_is_404(home, bare):
    for query in ("", "?revert=true"):
        response = home.admin.delete(f"/equipments/{bare['id']}/timed-action{query}")
        assert response.status_code == 404 and response.json()["error"]


def test_an_unknown_equipment_is_404(home):
    assert home.admin.post("/equipments/nope/timed-action", ACTION).status_code == 404
    assert home.admin.delete("/equipments/nope/timed-action").status_code == 404


@pytest.mark.parametrize(
    "body, field",
    [
        ({**ACTION, "durationMs": 9_999}, "durationMs"),
        ({**ACTION, "durationMs": 86_400_001}, "durationMs"),
        ({**ACTION, "durationMs": "60000"}, "durationMs"),
        ({**ACTION, "durationMs": 60_000.5}, "durationMs"),
        ({**ACTION, "value": 1}, "value"),
        ({**ACTION, "revertValue": ["OFF"]}, "revertValue"),
        ({**ACTION, "alias": ""}, "alias"),
        ({**ACTION, "alias": 7}, "alias"),
    ],
)
def test_malformed_bodies_are_400_naming_the_field(home, bare, body, field):
    response = home.admin.post(f"/equipments/{bare['id']}/timed-action", body)
    assert response.status_code == 400, response.text
    assert field in response.json()["error"] and "code" not in response.json()


def test_malformed_json_and_a_non_object_are_400(home, bare):
    path = f"/equipments/{bare['id']}/timed-action"
    assert home.admin.post(path, data="{nope", headers={"Content-Type": "application/json"}).status_code == 400
    assert home.admin.post(path, [ACTION]).status_code == 400


def test_a_standard_user_may_use_both_routes(home, bare, standard):
    response = standard.post(f"/equipments/{bare['id']}/timed-action", ACTION)
    assert response.status_code == 400 and response.json()["code"] == "TimedCommandNotEligible"
    assert standard.post(f"/equipments/{bare['id']}/timed-action", {}).status_code == 409
    assert standard.delete(f"/equipments/{bare['id']}/timed-action").status_code == 404
    # the write barrier is still closed around them
    assert standard.put(f"/equipments/{bare['id']}", {"name": "x"}).status_code == 403


def test_no_timed_action_on_a_plain_equipment_read(home, bare):
    body = home.admin.get(f"/equipments/{bare['id']}").json()
    assert "timedAction" not in body and body["timedCommand"] is None
