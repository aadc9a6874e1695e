"""Timed actions, in process with a ManualClock: every row of the spec's "Timed action" table.

(spec: Equipment resource timedCommand/timedAction; States: Timed action; Endpoints: Timed action;
Errors: TimedCommandNotEligible, 404, 409; Limits: durations and steps.)
"""

from __future__ import annotations

import json
from datetime import timezone
from typing import Any

import gevent
import pytest
from pony import orm

from hausbox.core.clock import iso_utc
from hausbox.core.errors import ApiError
from hausbox.devices.discovery import DataSpec, OrderSpec
from hausbox.equipments import orders as orders_module
from tests.inprocess import light_specs

T0 = 1_780_000_000_000
MINUTE = 60_000
ACTION = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE}


@pytest.fixture
def house(make_house):
    """On a ManualClock at T0 (UTC), devices echoing orders back, a "Home" zone."""
    return make_house(start=T0, tz=timezone.utc, zone="Home")


@pytest.fixture
def lamp(house) -> str:
    """The "Lamp" equipment (state + brightness) of the device "lamp", OFF at brightness 10."""
    data, orders = light_specs()
    device = house.fake.discover("lamp", data, orders)
    house.fake.report("lamp", {"state": "OFF", "brightness": 10})
    return house.equipment("Lamp", "light_dimmable", [device])


def arm(house, equipment_id: str, body: dict[str, Any] | None = None, user: str | None = "u1") -> dict[str, Any]:
    return house.engine.timed_actions.arm(equipment_id, ACTION if body is None else body, user)


def row(house, equipment_id: str) -> Any:
    with orm.db_session:
        found = house.engine.db.TimedAction.get(equipment_id=equipment_id)
        return found.to_dict() if found else None


@pytest.fixture
def fast_retry(monkeypatch):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0)


# ---- none -> armed -------------------------------------------------------------------------------
def test_arming_sends_at_once_persists_and_shows_on_the_equipment(house, lamp):
    body = arm(house, lamp)
    assert house.sent() == [("lamp", "state", "ON")]
    assert body == {
        "alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE, "expiresAt": iso_utc(T0 + MINUTE),
        "armedAt": iso_utc(T0), "armedBy": "u1", "stepIndex": 0, "nextDurationMs": None,
    }  # fmt: skip
    assert body["expiresAt"] == "2026-05-28T20:27:40.000Z"  # ISO 8601, UTC
    assert house.equipment_json(lamp)["timedAction"] == body
    assert row(house, lamp)["expires_at"] == T0 + MINUTE
    (executed,) = house.events("equipment.order.executed")
    assert executed["source"] == {"kind": "manual", "userId": "u1", "timedAction": True}
    assert house.events("equipment.updated")[-1]["equipment"]["timedAction"] == body


def test_expiry_sends_the_revert_then_nothing_is_armed(house, lamp):
    arm(house, lamp)
    house.advance_to(T0 + MINUTE - 1)
    assert house.sent() == [("lamp", "state", "ON")]
    house.advance_to(T0 + MINUTE)
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert house.events("equipment.order.executed")[-1]["source"] == {"kind": "manual", "userId": "u1", "timedAction": True, "revert": True}
    assert "timedAction" not in house.equipment_json(lamp) and row(house, lamp) is None and house.engine.timed_actions.armed(lamp) is None
    house.clock.advance(3600)
    assert len(house.sent()) == 2


def test_action_and_revert_may_carry_the_same_value(house, lamp):
    body = arm(house, lamp, {**ACTION, "revertValue": "ON"})
    assert body["value"] == body["revertValue"] == "ON"
    assert house.engine.timed_actions.armed(lamp) is not None, "the echo of our own ON is not a manual revert"
    house.advance_to(T0 + MINUTE)
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "ON")]


# ---- armed, same alias and value: pushed back --------------------------------------------------------
def test_the_same_alias_and_value_pushes_the_expiry_back_and_sends_nothing(house, lamp):
    arm(house, lamp)
    house.advance_to(T0 + 40_000)
    body = arm(house, lamp, {**ACTION, "value": "on", "durationMs": 90_000})  # the same action, another case
    assert house.sent() == [("lamp", "state", "ON")]
    assert body["expiresAt"] == iso_utc(T0 + 40_000 + 90_000) and body["armedAt"] == iso_utc(T0)
    assert row(house, lamp)["expires_at"] == T0 + 130_000
    house.advance_to(T0 + 129_999)
    assert len(house.sent()) == 1, "the first deadline no longer fires"
    house.advance_to(T0 + 130_000)
    assert house.sent()[-1] == ("lamp", "state", "OFF") and len(house.sent()) == 2


# ---- armed, another alias or value: replaced -----------------------------------------------------------
def test_another_value_replaces_the_action_and_sends_it(house, lamp):
    arm(house, lamp)
    house.advance_to(T0 + 10_000)
    body = arm(house, lamp, {"alias": "state", "value": "OFF", "revertValue": "ON", "durationMs": 30_000}, user="u2")
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert (body["value"], body["armedAt"], body["armedBy"], body["expiresAt"]) == ("OFF", iso_utc(T0 + 10_000), "u2", iso_utc(T0 + 40_000))
    house.advance_to(T0 + 2 * MINUTE)
    assert house.sent()[2:] == [("lamp", "state", "ON")], "only the new action's revert, at its own time"


def test_another_alias_replaces_the_action(house, lamp):
    arm(house, lamp)
    arm(house, lamp, {"alias": "brightness", "value": "200", "revertValue": "10", "durationMs": 20_000})
    assert house.sent()[-1] == ("lamp", "brightness", 200)
    house.advance_to(T0 + 2 * MINUTE)
    assert house.sent()[2:] == [("lamp", "brightness", 10)], "the state action was replaced: no OFF"


def test_a_replacement_that_cannot_be_sent_keeps_the_armed_action(house, lamp, fast_retry):
    arm(house, lamp)
    house.fake.fail_next = 2
    with pytest.raises(ApiError) as failed:
        arm(house, lamp, {**ACTION, "value": "TOGGLE"})
    assert failed.value.status == 502
    assert house.equipment_json(lamp)["timedAction"]["value"] == "ON"
    house.advance_to(T0 + MINUTE)
    assert house.sent()[-1] == ("lamp", "state", "OFF")


def test_an_action_that_cannot_be_sent_arms_nothing(house, lamp, fast_retry):
    house.fake.fail_next = 2
    with pytest.raises(ApiError):
        arm(house, lamp)
    assert "timedAction" not in house.equipment_json(lamp) and row(house, lamp) is None


# ---- steps ------------------------------------------------------------------------------------------
STEPS = [MINUTE, 2 * MINUTE, 5 * MINUTE]


def _configure(house, lamp: str, **extra: Any) -> dict[str, Any]:
    config = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 10 * MINUTE, **extra}
    return house.engine.equipments.update(lamp, {"timedCommand": config})["timedCommand"]


def test_an_empty_body_arms_the_configured_command(house, lamp):
    assert _configure(house, lamp)["durationMs"] == 10 * MINUTE
    body = arm(house, lamp, {})
    assert (body["alias"], body["value"], body["revertValue"], body["durationMs"]) == ("state", "ON", "OFF", 10 * MINUTE)
    assert house.sent() == [("lamp", "state", "ON")]


def test_steps_extend_without_sending_then_the_last_step_disarms_and_leaves_the_state(house, lamp):
    assert _configure(house, lamp, durationStepsMs=STEPS)["durationMs"] == MINUTE  # aligned to the first step
    first = arm(house, lamp, {})
    assert (first["stepIndex"], first["nextDurationMs"], first["expiresAt"]) == (0, 2 * MINUTE, iso_utc(T0 + MINUTE))
    house.advance_to(T0 + 30_000)
    second = arm(house, lamp, {})
    assert (second["stepIndex"], second["nextDurationMs"], second["expiresAt"]) == (1, 5 * MINUTE, iso_utc(T0 + 30_000 + 2 * MINUTE))
    house.advance_to(T0 + 40_000)
    third = arm(house, lamp, {})
    assert (third["stepIndex"], third["nextDurationMs"], third["expiresAt"]) == (2, None, iso_utc(T0 + 40_000 + 5 * MINUTE))
    assert house.sent() == [("lamp", "state", "ON")], "stepping sends nothing"
    assert arm(house, lamp, {}) == {"disarmed": True}
    assert "timedAction" not in house.equipment_json(lamp) and row(house, lamp) is None
    house.clock.advance(3600)
    assert house.sent() == [("lamp", "state", "ON")], "nothing sent: the equipment stays in its acted state"
    assert house.equipment_json(lamp)["data"]["state"] == "ON"


def test_an_explicit_body_for_the_configured_action_steps_too(house, lamp):
    _configure(house, lamp, durationStepsMs=STEPS)
    arm(house, lamp, {})
    assert arm(house, lamp, ACTION)["stepIndex"] == 1


def test_steps_changed_while_armed_replace_the_slot_by_its_duration(house, lamp):
    _configure(house, lamp, durationStepsMs=STEPS)
    arm(house, lamp, {})
    assert arm(house, lamp, {})["durationMs"] == 2 * MINUTE  # step 1 of the old steps
    # New steps: the 2-minute slot now sits at index 2 (90 s <= 2 min < 150 s), whatever was stored.
    _configure(house, lamp, durationStepsMs=[20_000, 40_000, 90_000, 150_000, 200_000])
    shown = house.equipment_json(lamp)["timedAction"]
    assert (shown["stepIndex"], shown["nextDurationMs"]) == (2, 150_000)
    body = arm(house, lamp, {})
    assert (body["stepIndex"], body["durationMs"], body["nextDurationMs"]) == (3, 150_000, 200_000)
    # Steps shortened under the armed duration: it is past the last step, the next POST disarms.
    _configure(house, lamp, durationStepsMs=[20_000, 40_000])
    assert (house.equipment_json(lamp)["timedAction"]["stepIndex"], house.equipment_json(lamp)["timedAction"]["nextDurationMs"]) == (1, None)
    assert arm(house, lamp, {}) == {"disarmed": True}
    assert len(house.sent()) == 1


def test_steps_do_not_apply_to_another_action(house, lamp):
    _configure(house, lamp, durationStepsMs=STEPS)
    body = arm(house, lamp, {"alias": "brightness", "value": "100", "revertValue": "10", "durationMs": 30_000})
    assert (body["stepIndex"], body["nextDurationMs"]) == (0, None)
    again = arm(house, lamp, {"alias": "brightness", "value": "100", "revertValue": "10", "durationMs": 30_000})
    assert again["durationMs"] == 30_000 and "disarmed" not in again


# ---- expiry while the service was down, restarts ---------------------------------------------------------
def test_a_deadline_passed_during_downtime_is_honoured_at_start(house, lamp):
    arm(house, lamp)
    house.restart(at=T0 + 10 * MINUTE)
    assert house.equipment_json(lamp)["timedAction"]["expiresAt"] == iso_utc(T0 + MINUTE), "loaded from the database"
    assert house.sent() == []
    house.start()
    assert house.sent() == [("lamp", "state", "OFF")]
    assert "timedAction" not in house.equipment_json(lamp) and row(house, lamp) is None
    house.restart(at=T0 + 20 * MINUTE)
    with orm.db_session:
        assert house.engine.db.TimedAction.select().count() == 0


def test_a_deadline_still_ahead_after_a_restart_fires_at_its_time(house, lamp):
    arm(house, lamp)
    house.restart(at=T0 + 20_000)
    house.start()
    house.advance_to(T0 + MINUTE - 1)
    assert house.sent() == []
    house.advance_to(T0 + MINUTE)
    assert house.sent() == [("lamp", "state", "OFF")]


def test_a_due_revert_at_start_waits_for_its_integration_to_connect(house, lamp):
    arm(house, lamp)
    house.restart(at=T0 + 10 * MINUTE)
    house.fake.connected = False
    house.fake.start = lambda: None  # stays disconnected until the test says so
    house.start()
    assert house.sent() == [] and house.engine.timed_actions.armed(lamp) is not None
    house.fake.connected = True
    house.engine.bus.emit("system.integration.connected", integrationId="fake")
    gevent.sleep(0)
    assert house.sent() == [("lamp", "state", "OFF")]
    assert house.events("system.alarm.raised") == []


def test_a_due_revert_whose_integration_never_connects_raises_an_alarm_after_the_grace(house, lamp, fast_retry):
    arm(house, lamp)
    house.restart(at=T0 + 10 * MINUTE)
    house.fake.connected = False
    house.fake.start = lambda: None
    house.start()
    house.clock.advance(59)
    assert house.events("system.alarm.raised") == []
    house.clock.advance(1)
    (alarm,) = [a for a in house.events("system.alarm.raised") if a["source"] == "timed-action"]
    assert "Lamp" in alarm["message"] and "not connected" in alarm["message"]
    assert house.engine.timed_actions.armed(lamp) is None and row(house, lamp) is None


# ---- a revert that cannot be sent ---------------------------------------------------------------
def test_a_revert_that_cannot_be_sent_raises_an_alarm_and_is_never_replayed(house, lamp, fast_retry):
    arm(house, lamp)
    house.fake.fail_next = 2  # the send and its one retry
    house.advance_to(T0 + MINUTE)
    alarms = [a for a in house.events("system.alarm.raised") if a["source"] == "timed-action"]
    assert len(alarms) == 1
    assert alarms[0]["level"] == "error" and alarms[0]["alarmId"] == f"timed-revert:{lamp}"
    assert "Lamp" in alarms[0]["message"] and "OFF" in alarms[0]["message"]
    assert row(house, lamp) is None and "timedAction" not in house.equipment_json(lamp)
    house.clock.advance(3600)
    assert house.sent() == [("lamp", "state", "ON")]
    house.restart(at=T0 + 2 * 3600_000)
    house.start()
    house.clock.advance(120)
    assert house.sent() == [], "never replayed, not even after a restart"


def test_a_disabled_equipment_at_expiry_is_an_unsent_revert(house, lamp):
    arm(house, lamp)
    house.engine.equipments.update(lamp, {"enabled": False})
    house.advance_to(T0 + MINUTE)
    (alarm,) = house.events("system.alarm.raised")
    assert alarm["source"] == "timed-action" and "disabled" in alarm["message"]
    assert house.engine.timed_actions.armed(lamp) is None


# ---- manual revert ---------------------------------------------------------------------------------
def test_the_state_measure_announcing_the_revert_value_disarms(house, lamp):
    arm(house, lamp)
    house.fake.report("lamp", {"brightness": 40})  # another measure: nothing
    assert house.engine.timed_actions.armed(lamp) is not None
    house.fake.report("lamp", {"state": "OFF"})  # switched off by hand
    assert house.engine.timed_actions.armed(lamp) is None and row(house, lamp) is None and "timedAction" not in house.equipment_json(lamp)
    house.clock.advance(3600)
    assert house.sent() == [("lamp", "state", "ON")], "nothing sent at expiry"


def test_our_own_late_echo_is_not_a_manual_revert_when_action_equals_revert(house, lamp):
    house.fake.echo = False  # the device answers later, as a real one does
    arm(house, lamp, {**ACTION, "revertValue": "ON"})
    house.fake.report("lamp", {"state": "ON"})  # the echo of our ON
    assert house.engine.timed_actions.armed(lamp) is not None
    house.fake.report("lamp", {"state": "OFF"})
    house.fake.report("lamp", {"state": "ON"})  # now it is someone's hand
    assert house.engine.timed_actions.armed(lamp) is None


# ---- DELETE ------------------------------------------------------------------------------------------
def test_delete_with_revert_sends_it_now(house, lamp):
    arm(house, lamp)
    house.engine.timed_actions.disarm(lamp, revert=True, user_id="u2")
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert house.events("equipment.order.executed")[-1]["source"]["userId"] == "u2"
    assert house.engine.timed_actions.armed(lamp) is None and row(house, lamp) is None
    house.clock.advance(3600)
    assert len(house.sent()) == 2


def test_delete_with_a_revert_that_fails_keeps_the_slot(house, lamp, fast_retry):
    arm(house, lamp)
    house.fake.fail_next = 2
    with pytest.raises(ApiError):
        house.engine.timed_actions.disarm(lamp, revert=True)
    assert house.engine.timed_actions.armed(lamp) is not None
    house.advance_to(T0 + MINUTE)
    assert house.sent()[-1] == ("lamp", "state", "OFF")


def test_delete_without_revert_abandons_the_expiry(house, lamp):
    arm(house, lamp)
    house.engine.timed_actions.disarm(lamp)
    house.clock.advance(3600)
    assert house.sent() == [("lamp", "state", "ON")]
    assert "timedAction" not in house.equipment_json(lamp) and row(house, lamp) is None


def test_delete_with_nothing_armed_is_a_404(house, lamp):
    with pytest.raises(ApiError) as missing:
        house.engine.timed_actions.disarm(lamp)
    assert missing.value.status == 404


# ---- equipment deleted --------------------------------------------------------------------------
def test_deleting_the_equipment_removes_the_deadline(house, lamp):
    arm(house, lamp)
    house.engine.equipments.delete(lamp)
    assert house.engine.timed_actions.armed(lamp) is None and row(house, lamp) is None
    house.clock.advance(3600)
    assert house.sent() == [("lamp", "state", "ON")]
    assert house.events("system.alarm.raised") == []


# ---- eligibility and validation -------------------------------------------------------------------
def _error(fn, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as raised:
        fn(*args)
    return raised.value


def test_eligibility_needs_the_order_and_a_bound_state_measure(house, lamp):
    plug_device = house.fake.discover("plug", [DataSpec("power", "number", "power")], [OrderSpec("relay", "enum", None, enum_values=["ON", "OFF"])])
    plug = house.equipment("Plug", "switch", [plug_device])
    gate_device = house.fake.discover("gate", [DataSpec("position", "enum", "gate_state", enum_values=["open", "closed"])], [OrderSpec("trigger", "enum", None, enum_values=["PULSE"])])
    gate = house.engine.equipments.create("Gate", "gate", house.zone_id, device_ids=[gate_device.id])["id"]  # order alias "command"

    missing_order = _error(arm, house, lamp, {**ACTION, "alias": "nope"})
    assert (missing_order.status, missing_order.code) == (400, "TimedCommandNotEligible")
    no_state = _error(arm, house, plug, {"alias": "relay", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE})
    assert (no_state.status, no_state.code) == (400, "TimedCommandNotEligible")
    assert house.fake.sent == []
    # a measure in a state category counts, whatever its alias
    body = arm(house, gate, {"alias": "command", "value": "PULSE", "revertValue": "PULSE", "durationMs": MINUTE})
    assert body["alias"] == "command" and house.sent() == [("gate", "trigger", "PULSE")]
    # the order's own alias as a data binding counts too: the lamp's "brightness"
    assert arm(house, lamp, {"alias": "brightness", "value": "50", "revertValue": "10", "durationMs": MINUTE})["alias"] == "brightness"


def test_a_configured_command_whose_state_measure_is_gone_is_not_eligible(house, lamp):
    _configure(house, lamp)
    for binding in list(house.engine.equipments.require(lamp).data_bindings.values()):
        house.engine.equipments.remove_data_binding(lamp, binding.id)
    assert _error(arm, house, lamp, {}).code == "TimedCommandNotEligible"


def test_an_empty_body_without_a_configured_command_is_a_409(house, lamp):
    assert _error(arm, house, lamp, {}).status == 409


@pytest.mark.parametrize(
    "body, word",
    [
        ({**ACTION, "durationMs": 9_999}, "durationMs"),
        ({**ACTION, "durationMs": 86_400_001}, "durationMs"),
        ({k: v for k, v in ACTION.items() if k != "durationMs"}, "durationMs"),
        ({k: v for k, v in ACTION.items() if k != "alias"}, "alias"),
        ({**ACTION, "value": 3}, "value"),
        ({**ACTION, "revertValue": "MAYBE"}, "value must be one of"),  # the order would refuse the revert
    ],
)
def test_invalid_bodies_are_400_and_send_nothing(house, lamp, body, word):
    error = _error(arm, house, lamp, body)
    assert error.status == 400 and word in error.message and error.code is None
    assert "timedCommand." not in error.message
    assert house.sent() == [] and house.engine.timed_actions.armed(lamp) is None


def test_limits_are_inclusive(house, lamp):
    assert arm(house, lamp, {**ACTION, "durationMs": 10_000})["expiresAt"] == iso_utc(T0 + 10_000)
    assert arm(house, lamp, {**ACTION, "value": "TOGGLE", "durationMs": 86_400_000})["expiresAt"] == iso_utc(T0 + 86_400_000)


# ---- over HTTP, in process ---------------------------------------------------------------------------
def _http(house, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    status, _, content = house.api(method, path, body)
    return status, json.loads(content) if content else None


def test_http_arm_read_and_end(house, lamp):
    status, body = _http(house, "POST", f"/equipments/{lamp}/timed-action", ACTION)
    assert status == 200 and body["expiresAt"] == iso_utc(T0 + MINUTE) and body["armedBy"]
    assert _http(house, "GET", f"/equipments/{lamp}")[1]["timedAction"] == body
    assert _http(house, "DELETE", f"/equipments/{lamp}/timed-action?revert=true") == (204, None)
    assert house.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert "timedAction" not in _http(house, "GET", f"/equipments/{lamp}")[1]
    assert _http(house, "DELETE", f"/equipments/{lamp}/timed-action")[0] == 404
    assert _http(house, "POST", f"/equipments/{lamp}/timed-action", {})[0] == 409
    status, error = _http(house, "POST", f"/equipments/{lamp}/timed-action", {**ACTION, "alias": "nope"})
    assert (status, error.get("code")) == (400, "TimedCommandNotEligible") and error["error"]
