"""Timed actions, in process with a ManualClock: every row of the spec's "Timed action" table.

(spec: Equipment resource timedCommand/timedAction; States: Timed action; Endpoints: Timed action;
Errors: TimedCommandNotEligible, 404, 409; Limits: durations and steps.)
"""

from __future__ import annotations

import json
from datetime import timezone
from pathlib import Path
from typing import Any

import gevent
import pytest
from pony import orm

from hausbox.core.clock import ManualClock, iso_utc
from hausbox.core.errors import ApiError
from hausbox.devices.discovery import DataSpec, OrderSpec
from hausbox.equipments import orders as orders_module
from tests.inprocess import Recorder, build_engine, light_specs, start

T0 = 1_780_000_000_000
MINUTE = 60_000
ACTION = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE}


class Lab:
    """An engine on a ManualClock, the fake integration, a zone and a lamp (state + brightness)."""

    def __init__(self, data_dir: Path, now_ms: int = T0, fresh: bool = True):
        self.data_dir = data_dir
        self.clock = ManualClock(timezone.utc, now_ms)
        self.engine, self.fake = build_engine(data_dir, clock=self.clock)
        self.recorder = Recorder(self.engine)
        self.timed = self.engine.timed_actions
        if fresh:
            self.zone_id = self.engine.zones.create("Home")["id"]
            data, orders = light_specs()
            self.fake.discover("lamp", data, orders)
            self.fake.report("lamp", {"state": "OFF", "brightness": 10})
            self.lamp = self.equipment("Lamp", "light_dimmable", "lamp")

    def equipment(self, name: str, equipment_type: str, *sources: str) -> str:
        ids = [self._device_id(s) for s in sources]
        return self.engine.equipments.create(name, equipment_type, self.zone_id, device_ids=ids)["id"]

    def _device_id(self, source: str) -> str:
        return next(d.id for d in self.engine.devices.all() if d.source_device_id == source)

    def arm(self, body: dict[str, Any] | None = None, equipment_id: str | None = None, user: str | None = "u1") -> dict[str, Any]:
        return self.timed.arm(equipment_id or self.lamp, ACTION if body is None else body, user)

    def json(self, equipment_id: str | None = None) -> dict[str, Any]:
        manager = self.engine.equipments
        return manager.to_json(manager.require(equipment_id or self.lamp))

    def row(self, equipment_id: str | None = None) -> Any:
        with orm.db_session:
            row = self.engine.db.TimedAction.get(equipment_id=equipment_id or self.lamp)
            return row.to_dict() if row else None

    def advance_to(self, ms: int) -> None:
        self.clock.set(ms)

    def sent(self) -> list[tuple[str, str, Any]]:
        return list(self.fake.sent)


@pytest.fixture
def lab(tmp_path):
    instance = Lab(tmp_path / "data")
    yield instance
    instance.engine.stop()


@pytest.fixture
def fast_retry(monkeypatch):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0)


# ---- none -> armed -------------------------------------------------------------------------------
def test_arming_sends_at_once_persists_and_shows_on_the_equipment(lab):
    body = lab.arm()
    assert lab.sent() == [("lamp", "state", "ON")]
    assert body == {
        "alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE, "expiresAt": iso_utc(T0 + MINUTE),
        "armedAt": iso_utc(T0), "armedBy": "u1", "stepIndex": 0, "nextDurationMs": None,
    }  # fmt: skip
    assert body["expiresAt"] == "2026-05-28T20:27:40.000Z"  # ISO 8601, UTC
    assert lab.json()["timedAction"] == body
    assert lab.row()["expires_at"] == T0 + MINUTE
    (executed,) = lab.recorder.of("equipment.order.executed")
    assert executed["source"] == {"kind": "manual", "userId": "u1", "timedAction": True}
    assert lab.recorder.of("equipment.updated")[-1]["equipment"]["timedAction"] == body


def test_expiry_sends_the_revert_then_nothing_is_armed(lab):
    lab.arm()
    lab.advance_to(T0 + MINUTE - 1)
    assert lab.sent() == [("lamp", "state", "ON")]
    lab.advance_to(T0 + MINUTE)
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert lab.recorder.of("equipment.order.executed")[-1]["source"] == {"kind": "manual", "userId": "u1", "timedAction": True, "revert": True}
    assert "timedAction" not in lab.json() and lab.row() is None and lab.timed.armed(lab.lamp) is None
    lab.clock.advance(3600)
    assert len(lab.sent()) == 2


def test_action_and_revert_may_carry_the_same_value(lab):
    body = lab.arm({**ACTION, "revertValue": "ON"})
    assert body["value"] == body["revertValue"] == "ON"
    assert lab.timed.armed(lab.lamp) is not None, "the echo of our own ON is not a manual revert"
    lab.advance_to(T0 + MINUTE)
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "ON")]


# ---- armed, same alias and value: pushed back --------------------------------------------------------
def test_the_same_alias_and_value_pushes_the_expiry_back_and_sends_nothing(lab):
    lab.arm()
    lab.advance_to(T0 + 40_000)
    body = lab.arm({**ACTION, "value": "on", "durationMs": 90_000})  # the same action, another case
    assert lab.sent() == [("lamp", "state", "ON")]
    assert body["expiresAt"] == iso_utc(T0 + 40_000 + 90_000) and body["armedAt"] == iso_utc(T0)
    assert lab.row()["expires_at"] == T0 + 130_000
    lab.advance_to(T0 + 129_999)
    assert len(lab.sent()) == 1, "the first deadline no longer fires"
    lab.advance_to(T0 + 130_000)
    assert lab.sent()[-1] == ("lamp", "state", "OFF") and len(lab.sent()) == 2


# ---- armed, another alias or value: replaced -----------------------------------------------------------
def test_another_value_replaces_the_action_and_sends_it(lab):
    lab.arm()
    lab.advance_to(T0 + 10_000)
    body = lab.arm({"alias": "state", "value": "OFF", "revertValue": "ON", "durationMs": 30_000}, user="u2")
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert (body["value"], body["armedAt"], body["armedBy"], body["expiresAt"]) == ("OFF", iso_utc(T0 + 10_000), "u2", iso_utc(T0 + 40_000))
    lab.advance_to(T0 + 2 * MINUTE)
    assert lab.sent()[2:] == [("lamp", "state", "ON")], "only the new action's revert, at its own time"


def test_another_alias_replaces_the_action(lab):
    lab.arm()
    lab.arm({"alias": "brightness", "value": "200", "revertValue": "10", "durationMs": 20_000})
    assert lab.sent()[-1] == ("lamp", "brightness", 200)
    lab.advance_to(T0 + 2 * MINUTE)
    assert lab.sent()[2:] == [("lamp", "brightness", 10)], "the state action was replaced: no OFF"


def test_a_replacement_that_cannot_be_sent_keeps_the_armed_action(lab, fast_retry):
    lab.arm()
    lab.fake.fail_next = 2
    with pytest.raises(ApiError) as failed:
        lab.arm({**ACTION, "value": "TOGGLE"})
    assert failed.value.status == 502
    assert lab.json()["timedAction"]["value"] == "ON"
    lab.advance_to(T0 + MINUTE)
    assert lab.sent()[-1] == ("lamp", "state", "OFF")


def test_an_action_that_cannot_be_sent_arms_nothing(lab, fast_retry):
    lab.fake.fail_next = 2
    with pytest.raises(ApiError):
        lab.arm()
    assert "timedAction" not in lab.json() and lab.row() is None


# ---- steps ------------------------------------------------------------------------------------------
STEPS = [MINUTE, 2 * MINUTE, 5 * MINUTE]


def _configure(lab: Lab, **extra: Any) -> dict[str, Any]:
    config = {"alias": "state", "value": "ON", "revertValue": "OFF", "durationMs": 10 * MINUTE, **extra}
    return lab.engine.equipments.update(lab.lamp, {"timedCommand": config})["timedCommand"]


def test_an_empty_body_arms_the_configured_command(lab):
    assert _configure(lab)["durationMs"] == 10 * MINUTE
    body = lab.arm({})
    assert (body["alias"], body["value"], body["revertValue"], body["durationMs"]) == ("state", "ON", "OFF", 10 * MINUTE)
    assert lab.sent() == [("lamp", "state", "ON")]


def test_steps_extend_without_sending_then_the_last_step_disarms_and_leaves_the_state(lab):
    assert _configure(lab, durationStepsMs=STEPS)["durationMs"] == MINUTE  # aligned to the first step
    first = lab.arm({})
    assert (first["stepIndex"], first["nextDurationMs"], first["expiresAt"]) == (0, 2 * MINUTE, iso_utc(T0 + MINUTE))
    lab.advance_to(T0 + 30_000)
    second = lab.arm({})
    assert (second["stepIndex"], second["nextDurationMs"], second["expiresAt"]) == (1, 5 * MINUTE, iso_utc(T0 + 30_000 + 2 * MINUTE))
    lab.advance_to(T0 + 40_000)
    third = lab.arm({})
    assert (third["stepIndex"], third["nextDurationMs"], third["expiresAt"]) == (2, None, iso_utc(T0 + 40_000 + 5 * MINUTE))
    assert lab.sent() == [("lamp", "state", "ON")], "stepping sends nothing"
    assert lab.arm({}) == {"disarmed": True}
    assert "timedAction" not in lab.json() and lab.row() is None
    lab.clock.advance(3600)
    assert lab.sent() == [("lamp", "state", "ON")], "nothing sent: the equipment stays in its acted state"
    assert lab.json()["data"]["state"] == "ON"


def test_an_explicit_body_for_the_configured_action_steps_too(lab):
    _configure(lab, durationStepsMs=STEPS)
    lab.arm({})
    assert lab.arm(ACTION)["stepIndex"] == 1


def test_steps_changed_while_armed_replace_the_slot_by_its_duration(lab):
    _configure(lab, durationStepsMs=STEPS)
    lab.arm({})
    assert lab.arm({})["durationMs"] == 2 * MINUTE  # step 1 of the old steps
    # New steps: the 2-minute slot now sits at index 2 (90 s <= 2 min < 150 s), whatever was stored.
    _configure(lab, durationStepsMs=[20_000, 40_000, 90_000, 150_000, 200_000])
    shown = lab.json()["timedAction"]
    assert (shown["stepIndex"], shown["nextDurationMs"]) == (2, 150_000)
    body = lab.arm({})
    assert (body["stepIndex"], body["durationMs"], body["nextDurationMs"]) == (3, 150_000, 200_000)
    # Steps shortened under the armed duration: it is past the last step, the next POST disarms.
    _configure(lab, durationStepsMs=[20_000, 40_000])
    assert (lab.json()["timedAction"]["stepIndex"], lab.json()["timedAction"]["nextDurationMs"]) == (1, None)
    assert lab.arm({}) == {"disarmed": True}
    assert len(lab.sent()) == 1


def test_steps_do_not_apply_to_another_action(lab):
    _configure(lab, durationStepsMs=STEPS)
    body = lab.arm({"alias": "brightness", "value": "100", "revertValue": "10", "durationMs": 30_000})
    assert (body["stepIndex"], body["nextDurationMs"]) == (0, None)
    again = lab.arm({"alias": "brightness", "value": "100", "revertValue": "10", "durationMs": 30_000})
    assert again["durationMs"] == 30_000 and "disarmed" not in again


# ---- expiry while the service was down, restarts ---------------------------------------------------------
def test_a_deadline_passed_during_downtime_is_honoured_at_start(lab, tmp_path):
    lab.arm()
    lab.engine.stop()
    later = Lab(lab.data_dir, now_ms=T0 + 10 * MINUTE, fresh=False)
    try:
        assert later.json(lab.lamp)["timedAction"]["expiresAt"] == iso_utc(T0 + MINUTE), "loaded from the database"
        assert later.sent() == []
        start(later.engine)
        assert later.sent() == [("lamp", "state", "OFF")]
        assert "timedAction" not in later.json(lab.lamp) and later.row(lab.lamp) is None
    finally:
        later.engine.stop()
    lab.engine = Lab(lab.data_dir, now_ms=T0 + 20 * MINUTE, fresh=False).engine  # torn down by the fixture
    with orm.db_session:
        assert lab.engine.db.TimedAction.select().count() == 0


def test_a_deadline_still_ahead_after_a_restart_fires_at_its_time(lab):
    lab.arm()
    lab.engine.stop()
    later = Lab(lab.data_dir, now_ms=T0 + 20_000, fresh=False)
    lab.engine = later.engine
    start(later.engine)
    later.advance_to(T0 + MINUTE - 1)
    assert later.sent() == []
    later.advance_to(T0 + MINUTE)
    assert later.sent() == [("lamp", "state", "OFF")]


def test_a_due_revert_at_start_waits_for_its_integration_to_connect(lab):
    lab.arm()
    lab.engine.stop()
    later = Lab(lab.data_dir, now_ms=T0 + 10 * MINUTE, fresh=False)
    lab.engine = later.engine
    later.fake.connected = False
    later.fake.start = lambda: None  # stays disconnected until the test says so
    start(later.engine)
    assert later.sent() == [] and later.timed.armed(lab.lamp) is not None
    later.fake.connected = True
    later.engine.bus.emit("system.integration.connected", integrationId="fake")
    gevent.sleep(0)
    assert later.sent() == [("lamp", "state", "OFF")]
    assert later.recorder.of("system.alarm.raised") == []


def test_a_due_revert_whose_integration_never_connects_raises_an_alarm_after_the_grace(lab, fast_retry):
    lab.arm()
    lab.engine.stop()
    later = Lab(lab.data_dir, now_ms=T0 + 10 * MINUTE, fresh=False)
    lab.engine = later.engine
    later.fake.connected = False
    later.fake.start = lambda: None
    start(later.engine)
    later.clock.advance(59)
    assert later.recorder.of("system.alarm.raised") == []
    later.clock.advance(1)
    (alarm,) = [a for a in later.recorder.of("system.alarm.raised") if a["source"] == "timed-action"]
    assert "Lamp" in alarm["message"] and "not connected" in alarm["message"]
    assert later.timed.armed(lab.lamp) is None and later.row(lab.lamp) is None


# ---- a revert that cannot be sent ---------------------------------------------------------------
def test_a_revert_that_cannot_be_sent_raises_an_alarm_and_is_never_replayed(lab, fast_retry):
    lab.arm()
    lab.fake.fail_next = 2  # the send and its one retry
    lab.advance_to(T0 + MINUTE)
    alarms = [a for a in lab.recorder.of("system.alarm.raised") if a["source"] == "timed-action"]
    assert len(alarms) == 1
    assert alarms[0]["level"] == "error" and alarms[0]["alarmId"] == f"timed-revert:{lab.lamp}"
    assert "Lamp" in alarms[0]["message"] and "OFF" in alarms[0]["message"]
    assert lab.row() is None and "timedAction" not in lab.json()
    lab.clock.advance(3600)
    assert lab.sent() == [("lamp", "state", "ON")]
    lab.engine.stop()
    later = Lab(lab.data_dir, now_ms=T0 + 2 * 3600_000, fresh=False)
    lab.engine = later.engine
    start(later.engine)
    later.clock.advance(120)
    assert later.sent() == [], "never replayed, not even after a restart"


def test_a_disabled_equipment_at_expiry_is_an_unsent_revert(lab):
    lab.arm()
    lab.engine.equipments.update(lab.lamp, {"enabled": False})
    lab.advance_to(T0 + MINUTE)
    (alarm,) = lab.recorder.of("system.alarm.raised")
    assert alarm["source"] == "timed-action" and "disabled" in alarm["message"]
    assert lab.timed.armed(lab.lamp) is None


# ---- manual revert ---------------------------------------------------------------------------------
def test_the_state_measure_announcing_the_revert_value_disarms(lab):
    lab.arm()
    lab.fake.report("lamp", {"brightness": 40})  # another measure: nothing
    assert lab.timed.armed(lab.lamp) is not None
    lab.fake.report("lamp", {"state": "OFF"})  # switched off by hand
    assert lab.timed.armed(lab.lamp) is None and lab.row() is None and "timedAction" not in lab.json()
    lab.clock.advance(3600)
    assert lab.sent() == [("lamp", "state", "ON")], "nothing sent at expiry"


def test_our_own_late_echo_is_not_a_manual_revert_when_action_equals_revert(lab):
    lab.fake.echo = False  # the device answers later, as a real one does
    lab.arm({**ACTION, "revertValue": "ON"})
    lab.fake.report("lamp", {"state": "ON"})  # the echo of our ON
    assert lab.timed.armed(lab.lamp) is not None
    lab.fake.report("lamp", {"state": "OFF"})
    lab.fake.report("lamp", {"state": "ON"})  # now it is someone's hand
    assert lab.timed.armed(lab.lamp) is None


# ---- DELETE ------------------------------------------------------------------------------------------
def test_delete_with_revert_sends_it_now(lab):
    lab.arm()
    lab.timed.disarm(lab.lamp, revert=True, user_id="u2")
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert lab.recorder.of("equipment.order.executed")[-1]["source"]["userId"] == "u2"
    assert lab.timed.armed(lab.lamp) is None and lab.row() is None
    lab.clock.advance(3600)
    assert len(lab.sent()) == 2


def test_delete_with_a_revert_that_fails_keeps_the_slot(lab, fast_retry):
    lab.arm()
    lab.fake.fail_next = 2
    with pytest.raises(ApiError):
        lab.timed.disarm(lab.lamp, revert=True)
    assert lab.timed.armed(lab.lamp) is not None
    lab.advance_to(T0 + MINUTE)
    assert lab.sent()[-1] == ("lamp", "state", "OFF")


def test_delete_without_revert_abandons_the_expiry(lab):
    lab.arm()
    lab.timed.disarm(lab.lamp)
    lab.clock.advance(3600)
    assert lab.sent() == [("lamp", "state", "ON")]
    assert "timedAction" not in lab.json() and lab.row() is None


def test_delete_with_nothing_armed_is_a_404(lab):
    with pytest.raises(ApiError) as missing:
        lab.timed.disarm(lab.lamp)
    assert missing.value.status == 404


# ---- equipment deleted --------------------------------------------------------------------------
def test_deleting_the_equipment_removes_the_deadline(lab):
    lab.arm()
    lab.engine.equipments.delete(lab.lamp)
    assert lab.timed.armed(lab.lamp) is None and lab.row() is None
    lab.clock.advance(3600)
    assert lab.sent() == [("lamp", "state", "ON")]
    assert lab.recorder.of("system.alarm.raised") == []


# ---- eligibility and validation -------------------------------------------------------------------
def _error(fn, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as raised:
        fn(*args)
    return raised.value


def test_eligibility_needs_the_order_and_a_bound_state_measure(lab):
    lab.fake.discover("plug", [DataSpec("power", "number", "power")], [OrderSpec("relay", "enum", None, enum_values=["ON", "OFF"])])
    plug = lab.equipment("Plug", "switch", "plug")
    gate_device = lab.fake.discover("gate", [DataSpec("position", "enum", "gate_state", enum_values=["open", "closed"])], [OrderSpec("trigger", "enum", None, enum_values=["PULSE"])])
    gate = lab.engine.equipments.create("Gate", "gate", lab.zone_id, device_ids=[gate_device.id])["id"]  # order alias "command"

    missing_order = _error(lab.arm, {**ACTION, "alias": "nope"})
    assert (missing_order.status, missing_order.code) == (400, "TimedCommandNotEligible")
    no_state = _error(lab.arm, {"alias": "relay", "value": "ON", "revertValue": "OFF", "durationMs": MINUTE}, plug)
    assert (no_state.status, no_state.code) == (400, "TimedCommandNotEligible")
    assert lab.fake.sent == []
    # a measure in a state category counts, whatever its alias
    body = lab.arm({"alias": "command", "value": "PULSE", "revertValue": "PULSE", "durationMs": MINUTE}, gate)
    assert body["alias"] == "command" and lab.sent() == [("gate", "trigger", "PULSE")]
    # the order's own alias as a data binding counts too: the lamp's "brightness"
    assert lab.arm({"alias": "brightness", "value": "50", "revertValue": "10", "durationMs": MINUTE})["alias"] == "brightness"


def test_a_configured_command_whose_state_measure_is_gone_is_not_eligible(lab):
    _configure(lab)
    for binding in list(lab.engine.equipments.require(lab.lamp).data_bindings.values()):
        lab.engine.equipments.remove_data_binding(lab.lamp, binding.id)
    assert _error(lab.arm, {}).code == "TimedCommandNotEligible"


def test_an_empty_body_without_a_configured_command_is_a_409(lab):
    assert _error(lab.arm, {}).status == 409


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
def test_invalid_bodies_are_400_and_send_nothing(lab, body, word):
    error = _error(lab.arm, body)
    assert error.status == 400 and word in error.message and error.code is None
    assert "timedCommand." not in error.message
    assert lab.sent() == [] and lab.timed.armed(lab.lamp) is None


def test_limits_are_inclusive(lab):
    assert lab.arm({**ACTION, "durationMs": 10_000})["expiresAt"] == iso_utc(T0 + 10_000)
    assert lab.arm({**ACTION, "value": "TOGGLE", "durationMs": 86_400_000})["expiresAt"] == iso_utc(T0 + 86_400_000)


# ---- over HTTP, in process ---------------------------------------------------------------------------
def _http(lab: Lab, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    from tests.equipments.conftest import House

    house = House.__new__(House)  # only its in-process WSGI call: no zone, no bus listener
    house.engine, house._token = lab.engine, token or getattr(lab, "token", None)
    if house._token is None:
        lab.token = house._token = lab.engine.auth.setup("admin", "correct-horse-42", "Admin", None)["accessToken"]
    status, _, content = house.api(method, path, body)
    return status, json.loads(content) if content else None


def test_http_arm_read_and_end(lab):
    status, body = _http(lab, "POST", f"/equipments/{lab.lamp}/timed-action", ACTION)
    assert status == 200 and body["expiresAt"] == iso_utc(T0 + MINUTE) and body["armedBy"]
    assert _http(lab, "GET", f"/equipments/{lab.lamp}")[1]["timedAction"] == body
    assert _http(lab, "DELETE", f"/equipments/{lab.lamp}/timed-action?revert=true") == (204, None)
    assert lab.sent() == [("lamp", "state", "ON"), ("lamp", "state", "OFF")]
    assert "timedAction" not in _http(lab, "GET", f"/equipments/{lab.lamp}")[1]
    assert _http(lab, "DELETE", f"/equipments/{lab.lamp}/timed-action")[0] == 404
    assert _http(lab, "POST", f"/equipments/{lab.lamp}/timed-action", {})[0] == 409
    status, error = _http(lab, "POST", f"/equipments/{lab.lamp}/timed-action", {**ACTION, "alias": "nope"})
    assert (status, error.get("code")) == (400, "TimedCommandNotEligible") and error["error"]
