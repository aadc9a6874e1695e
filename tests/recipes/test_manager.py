"""The recipe manager: lifecycle and events, failures kept inside a recipe, state, log, restart."""

from __future__ import annotations

from typing import Any

import pytest

from hausbox.core.errors import BadRequest, NotFound
from hausbox.recipes.api import InvalidParams, Recipe, Runner, Slot
from tests.inprocess import start

TEXTS = {
    "en": {"name": "Test", "description": "A test recipe", "slots": {"zone": {"name": "Zone"}, "fail": {"name": "Fail"}}, "groups": {}},
    "fr": {"name": "Essai", "description": "Une recette d'essai", "slots": {"zone": {"name": "Zone"}, "fail": {"name": "Échec"}}, "groups": {}},
}


class Probe(Runner):
    """Counts zone events; raises in its handler when asked; writes state twice per event."""

    def __init__(self, params: dict[str, Any], ctx: Any):
        self.ctx = ctx
        self.fail = params.get("fail") == "handler"
        self.seen = 0
        ctx.on("zone.data.changed", self.on_zone)
        ctx.call_later(60, self.tick)

    def on_zone(self, event: dict[str, Any]) -> None:
        self.seen += 1
        self.ctx.state.set("seen", self.seen)
        self.ctx.state.set("last", event["zoneId"])
        if self.fail:
            raise RuntimeError("handler exploded")

    def tick(self) -> None:
        raise ValueError("timer exploded")

    def on_action(self, action: str, payload: Any) -> None:
        if action == "crash":
            raise RuntimeError("action exploded")
        self.ctx.state.set("action", payload)


class ProbeRecipe(Recipe):
    id = "probe"
    slots = (Slot("zone", "zone", required=True), Slot("fail", "text"))
    i18n = TEXTS

    def __init__(self) -> None:
        self.runners: list[Probe] = []

    def validate(self, params: dict[str, Any], ctx: Any) -> None:
        if params.get("fail") == "validate":
            raise InvalidParams("fail: refused by the recipe")

    def create_instance(self, params: dict[str, Any], ctx: Any) -> Probe:
        if params.get("fail") == "create":
            raise RuntimeError("create exploded")
        runner = Probe(params, ctx)
        self.runners.append(runner)
        return runner


@pytest.fixture
def probe(lab):
    recipe = lab.recipes.registry.register(ProbeRecipe())
    lab.motion_sensor("pir")
    return lab, recipe


def test_lifecycle_events_carry_the_instance_and_recipe_ids(probe):
    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    ids = {"instanceId": iid, "recipeId": "probe"}
    assert [e["type"] for e in lab.recorder.events if e["type"].startswith("recipe.")] == ["recipe.instance.created", "recipe.instance.started"]
    assert all({k: e[k] for k in ids} == ids for e in lab.recorder.events if e["type"].startswith("recipe."))
    lab.recipes.disable(iid)
    assert lab.events("recipe.instance.stopped")[-1] == {"type": "recipe.instance.stopped", **ids}
    assert lab.recipes.get_instance(iid)["enabled"] is False and lab.recipes.get_instance(iid)["running"] is False
    lab.recipes.disable(iid)  # already disabled: nothing more
    assert len(lab.events("recipe.instance.stopped")) == 1
    lab.recipes.toggle(iid, True)
    assert len(lab.events("recipe.instance.started")) == 2
    lab.recipes.enable(iid)  # already running: a no-op
    assert len(lab.events("recipe.instance.started")) == 2
    lab.recipes.delete(iid)
    assert lab.events("recipe.instance.removed")[-1] == {"type": "recipe.instance.removed", **ids}
    assert lab.recipes.get_instance(iid) is None
    for call in (lambda: lab.recipes.enable(iid), lambda: lab.recipes.disable(iid), lambda: lab.recipes.toggle(iid, False),
                 lambda: lab.recipes.update_params(iid, {}), lambda: lab.recipes.delete(iid), lambda: lab.recipes.log_entries(iid)):  # fmt: skip
        with pytest.raises(NotFound, match="Recipe instance not found"):
            call()


def test_state_writes_of_one_handler_make_one_state_event(probe):
    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    lab.recorder.clear()
    lab.motion(True)
    changed = [e for e in lab.events("recipe.instance.state.changed") if e["instanceId"] == iid]
    handled = lab.state(iid)["seen"]
    assert handled >= 1 and len(changed) == handled  # two writes per event, one announcement
    assert lab.recipes.get_instance(iid)["state"]["last"] in {z.id for z in lab.engine.zones.all()}


def test_a_failing_recipe_never_stops_the_engine_or_the_other_instances(probe):
    lab, recipe = probe
    healthy = lab.create("probe", zone=lab.zone_id)
    faulty = lab.create("probe", zone=lab.zone_id, fail="handler")
    broken = lab.create("probe", zone=lab.zone_id, fail="create")
    errors = lab.events("recipe.instance.error")
    assert errors == [{"type": "recipe.instance.error", "instanceId": broken, "recipeId": "probe", "error": "create exploded"}]
    assert lab.recipes.get_instance(broken)["running"] is False and lab.recipes.get_instance(broken)["enabled"] is True
    lab.motion(True)
    assert lab.state(healthy)["seen"] >= 1 and lab.state(faulty)["seen"] >= 1
    assert any(e["instanceId"] == faulty and e["error"] == "handler exploded" for e in lab.events("recipe.instance.error"))
    assert lab.recipes.get_instance(faulty)["running"] is True
    lab.advance(60)  # every probe's timer raises: reported, nothing else breaks
    assert {e["instanceId"] for e in lab.events("recipe.instance.error") if e["error"] == "timer exploded"} == {healthy, faulty}
    lab.motion(False)
    assert lab.state(healthy)["seen"] >= 2
    entries = lab.recipes.log_entries(faulty)
    assert any(e["level"] == "error" and "handler exploded" in e["message"] for e in entries)
    with pytest.raises(Exception, match="Action failed: action exploded"):
        lab.recipes.run_action(healthy, "crash", None)
    assert lab.recipes.run_action(healthy, "note", {"x": 1}) == {"ok": True}
    assert lab.state(healthy)["action"] == {"x": 1}


def test_actions_need_a_running_instance(probe):
    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    lab.recipes.disable(iid)
    with pytest.raises(BadRequest, match="Instance not running"):
        lab.recipes.run_action(iid, "note", None)


def test_a_stopped_instance_hears_nothing_and_sends_nothing(probe):
    lab, recipe = probe
    iid = lab.create("probe", zone=lab.zone_id)
    runner = recipe.runners[-1]
    lab.recipes.disable(iid)
    seen = runner.seen
    lab.motion(True)
    lab.advance(120)
    assert runner.seen == seen
    assert runner.ctx.execute_order("anything", "state", "ON") is False


def test_params_are_checked_slot_by_slot_then_by_the_recipe(probe):
    lab, _ = probe
    with pytest.raises(NotFound, match="Recipe not found: nope"):
        lab.recipes.create("nope", {})
    cases = {
        "zone: is required": {},
        "zone: must be a zone id": {"zone": 5},
        "zone: zone not found: elsewhere": {"zone": "elsewhere"},
        "fail: must be a text": {"zone": lab.zone_id, "fail": {"a": 1}},
        "fail: refused by the recipe": {"zone": lab.zone_id, "fail": "validate"},
        "params: must be an object": [1],
    }
    for message, params in cases.items():
        with pytest.raises(BadRequest) as refused:
            lab.recipes.create("probe", params)
        assert refused.value.message == f"Invalid params: {message}"
    created = lab.recipes.create("probe", {"zone": lab.zone_id, "unknown": 1})
    assert created["params"] == {"zone": lab.zone_id}  # unknown params are dropped


def test_every_slot_type_is_checked_generically(lab):
    from hausbox.recipes.context import ReadContext as ValidationContext
    from hausbox.recipes.params import check_params

    class AllTypes(Recipe):
        id = "all-types"
        slots = (
            Slot("n", "number", constraints={"min": 0, "max": 10}), Slot("d", "duration", default="10m"), Slot("t", "time"),
            Slot("b", "boolean"), Slot("k", "data-key"), Slot("e", "equipment", list=True, constraints={"equipmentType": "button"}),
        )  # fmt: skip

    ctx = ValidationContext(lab.engine.equipments, lab.engine.zones, lab.engine.aggregator, lab.clock)
    button = lab.button("button")
    stored, resolved = check_params(AllTypes(), {"n": 3, "t": "07:30", "b": True, "k": "contact", "e": [button]}, ctx)
    assert resolved["d"] == "10m" and "d" not in stored
    bad = {
        "n: must be a number": {"n": "3"}, "n: must be at most 10": {"n": 11}, "n: must be at least 0": {"n": -1},
        "d: must be a duration like 10m": {"d": "10 minutes"}, "t: must be a time like 07:30": {"t": "7h30"},
        "b: must be true or false": {"b": "yes"}, "k: must be a data key": {"k": 3}, "e: must be a list": {"e": button},
        "e[0]: equipment not found: x": {"e": ["x"]}, "e: must not list the same item twice": {"e": [button, button]},
    }  # fmt: skip
    for message, params in bad.items():
        with pytest.raises(InvalidParams) as refused:
            check_params(AllTypes(), params, ctx)
        assert str(refused.value) == message
    for good in ("30s", "1h", "10 m", 1500):
        check_params(AllTypes(), {"d": good}, ctx)


def test_update_params_replaces_or_merges_and_restarts(probe):
    lab, recipe = probe
    iid = lab.create("probe", zone=lab.zone_id, fail="nothing")
    lab.recorder.clear()
    lab.recipes.update_params(iid, {"zone": lab.zone_id}, merge=False)
    assert lab.recipes.get_instance(iid)["params"] == {"zone": lab.zone_id}
    assert [e["type"] for e in lab.recorder.events if e["type"].startswith("recipe.instance.s")][:2] == ["recipe.instance.stopped", "recipe.instance.started"]
    lab.recipes.update_params(iid, {"fail": "x"})  # what a mode impact does: only what changes
    assert lab.recipes.get_instance(iid)["params"] == {"zone": lab.zone_id, "fail": "x"}
    lab.recipes.update_params(iid, {"fail": None})
    assert lab.recipes.get_instance(iid)["params"] == {"zone": lab.zone_id}
    with pytest.raises(BadRequest, match="Invalid params: fail: refused by the recipe"):
        lab.recipes.update_params(iid, {"fail": "validate"})
    assert lab.recipes.get_instance(iid)["running"] is True  # a refused update leaves it running
    lab.recipes.disable(iid)
    lab.recipes.update_params(iid, {"fail": "y"})
    assert lab.recipes.get_instance(iid)["running"] is False  # disabled stays stopped


def test_the_log_is_newest_first_and_limited(probe):
    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    for n in range(60):
        lab.recipes._write_log(lab.recipes.require(iid), f"line {n}")
    entries = lab.recipes.log_entries(iid)
    assert len(entries) == 50 and entries[0]["message"] == "line 59" and entries[-1]["message"] == "line 10"
    assert set(entries[0]) == {"id", "instanceId", "timestamp", "message", "level"}
    assert entries[0]["timestamp"] == "2026-06-15T06:00:00.000Z"
    assert [e["message"] for e in lab.recipes.log_entries(iid, 2)] == ["line 59", "line 58"]
    assert lab.recipes.log_entries(iid, 1000)[-1]["message"] == "Instance created"


def test_instances_and_state_survive_a_restart_and_start_after_system_started(make_lab):
    lab = make_lab()
    lamp = lab.light("lamp")
    lab.motion_sensor("pir")
    iid = lab.create("motion-light", zone=lab.zone_id, lights=[lamp], timeout="10m")
    paused = lab.create("motion-light", zone=lab.zone_id, lights=[lamp], timeout="1h")
    lab.recipes.disable(paused)
    lab.motion(True)
    lab.motion(False)
    before = lab.state(iid)
    assert before["timerExpiresAt"]
    lab.stop()

    again = make_lab("2026-06-15 08:05", data_dir=lab.data_dir)
    assert again.recipes.get_instance(iid)["state"] == before
    assert again.recipes.get_instance(iid)["running"] is False  # not before system.started
    start(again.engine)
    assert again.recipes.get_instance(iid)["running"] is True
    assert again.recipes.get_instance(paused)["running"] is False and again.recipes.get_instance(paused)["enabled"] is False
    again.advance(4 * 60)
    assert again.sent() == []
    again.advance(60)  # the timer armed before the restart fires at its time
    assert again.sent() == [("lamp", "state", "OFF")]


def test_a_deadline_passed_while_down_fires_on_return(make_lab):
    lab = make_lab()
    lamp = lab.light("lamp")
    lab.motion_sensor("pir")
    iid = lab.create("motion-light", zone=lab.zone_id, lights=[lamp], timeout="10m")
    lab.motion(True)
    lab.motion(False)
    lab.stop()
    again = make_lab("2026-06-15 09:00", data_dir=lab.data_dir)
    start(again.engine)
    again.advance(0)
    assert again.sent() == [("lamp", "state", "OFF")]
    assert "timerExpiresAt" not in again.state(iid)


def test_held_off_nothing_starts(make_lab):
    lab = make_lab()
    lab.engine.workers.gate.close("shadow mode")
    lamp = lab.light("lamp")
    lab.motion_sensor("pir")
    iid = lab.create("motion-light", zone=lab.zone_id, lights=[lamp])
    assert lab.recipes.get_instance(iid)["running"] is False
    lab.motion(True)
    assert lab.sent() == []


def test_an_instance_of_a_missing_recipe_is_kept_but_not_started(make_lab):
    lab = make_lab()
    lab.recipes.registry.register(ProbeRecipe())
    iid = lab.create("probe", zone=lab.zone_id)
    lab.stop()
    again = make_lab(data_dir=lab.data_dir)
    start(again.engine)
    assert again.recipes.get_instance(iid)["running"] is False
    again.recipes.registry.register(ProbeRecipe())  # the plugin arrives later
    assert again.recipes.get_instance(iid)["running"] is True


def test_deleting_an_instance_deletes_its_state_and_log(probe):
    from pony import orm

    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    lab.motion(True)
    lab.recipes.delete(iid)
    with orm.db_session:
        counts = [lab.engine.db.select(f"SELECT COUNT(*) FROM {table} WHERE instance_id = $iid", {"iid": iid})[0] for table in ("recipe_state", "recipe_log")]
    assert counts == [0, 0]


def test_the_log_is_pruned_to_its_newest_rows(probe, monkeypatch):
    from hausbox.recipes import manager as manager_module

    monkeypatch.setattr(manager_module, "LOG_KEEP", 30)
    monkeypatch.setattr(manager_module, "LOG_PRUNE_EVERY", 10)
    lab, _ = probe
    iid = lab.create("probe", zone=lab.zone_id)
    instance = lab.recipes.require(iid)
    for n in range(100):
        lab.recipes._write_log(instance, f"line {n}")
    kept = lab.recipes.log_entries(iid, 1000)
    assert 30 <= len(kept) < 40 and kept[0]["message"] == "line 99"
