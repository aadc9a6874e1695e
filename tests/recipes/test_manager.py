"""The recipe manager: lifecycle and events, failures kept inside a recipe, state, log, restart."""

from __future__ import annotations

from typing import Any

import pytest

from hausbox.core.errors import BadRequest, NotFound
from hausbox.recipes.api import InvalidParams, Recipe, Runner, Slot

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
def probe(house):
    recipe = house.recipes.registry.register(ProbeRecipe())
    house.motion_sensor("pir")
    return house, recipe


def test_lifecycle_events_carry_the_instance_and_recipe_ids(probe):
    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    ids = {"instanceId": iid, "recipeId": "probe"}
    assert [e["type"] for e in house.recorder.events if e["type"].startswith("recipe.")] == ["recipe.instance.created", "recipe.instance.started"]
    assert all({k: e[k] for k in ids} == ids for e in house.recorder.events if e["type"].startswith("recipe."))
    house.recipes.disable(iid)
    assert house.events("recipe.instance.stopped")[-1] == {"type": "recipe.instance.stopped", **ids}
    assert house.recipes.get_instance(iid)["enabled"] is False and house.recipes.get_instance(iid)["running"] is False
    house.recipes.disable(iid)  # already disabled: nothing more
    assert len(house.events("recipe.instance.stopped")) == 1
    house.recipes.toggle(iid, True)
    assert len(house.events("recipe.instance.started")) == 2
    house.recipes.enable(iid)  # already running: a no-op
    assert len(house.events("recipe.instance.started")) == 2
    house.recipes.delete(iid)
    assert house.events("recipe.instance.removed")[-1] == {"type": "recipe.instance.removed", **ids}
    assert house.recipes.get_instance(iid) is None
    for call in (lambda: house.recipes.enable(iid), lambda: house.recipes.disable(iid), lambda: house.recipes.toggle(iid, False),
                 lambda: house.recipes.update_params(iid, {}), lambda: house.recipes.delete(iid), lambda: house.recipes.log_entries(iid)):  # fmt: skip
        with pytest.raises(NotFound, match="Recipe instance not found"):
            call()


def test_state_writes_of_one_handler_make_one_state_event(probe):
    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    house.recorder.clear()
    house.motion(True)
    changed = [e for e in house.events("recipe.instance.state.changed") if e["instanceId"] == iid]
    handled = house.recipe_state(iid)["seen"]
    assert handled >= 1 and len(changed) == handled  # two writes per event, one announcement
    assert house.recipes.get_instance(iid)["state"]["last"] in {z.id for z in house.engine.zones.all()}


def test_a_failing_recipe_never_stops_the_engine_or_the_other_instances(probe):
    house, recipe = probe
    healthy = house.recipe("probe", zone=house.zone_id)
    faulty = house.recipe("probe", zone=house.zone_id, fail="handler")
    broken = house.recipe("probe", zone=house.zone_id, fail="create")
    errors = house.events("recipe.instance.error")
    assert errors == [{"type": "recipe.instance.error", "instanceId": broken, "recipeId": "probe", "error": "create exploded"}]
    assert house.recipes.get_instance(broken)["running"] is False and house.recipes.get_instance(broken)["enabled"] is True
    house.motion(True)
    assert house.recipe_state(healthy)["seen"] >= 1 and house.recipe_state(faulty)["seen"] >= 1
    assert any(e["instanceId"] == faulty and e["error"] == "handler exploded" for e in house.events("recipe.instance.error"))
    assert house.recipes.get_instance(faulty)["running"] is True
    house.advance(60)  # every probe's timer raises: reported, nothing else breaks
    assert {e["instanceId"] for e in house.events("recipe.instance.error") if e["error"] == "timer exploded"} == {healthy, faulty}
    house.motion(False)
    assert house.recipe_state(healthy)["seen"] >= 2
    entries = house.recipes.log_entries(faulty)
    assert any(e["level"] == "error" and "handler exploded" in e["message"] for e in entries)
    with pytest.raises(Exception, match="Action failed: action exploded"):
        house.recipes.run_action(healthy, "crash", None)
    assert house.recipes.run_action(healthy, "note", {"x": 1}) == {"ok": True}
    assert house.recipe_state(healthy)["action"] == {"x": 1}


def test_actions_need_a_running_instance(probe):
    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    house.recipes.disable(iid)
    with pytest.raises(BadRequest, match="Instance not running"):
        house.recipes.run_action(iid, "note", None)


def test_a_stopped_instance_hears_nothing_and_sends_nothing(probe):
    house, recipe = probe
    iid = house.recipe("probe", zone=house.zone_id)
    runner = recipe.runners[-1]
    house.recipes.disable(iid)
    seen = runner.seen
    house.motion(True)
    house.advance(120)
    assert runner.seen == seen
    assert runner.ctx.execute_order("anything", "state", "ON") is False


def test_params_are_checked_slot_by_slot_then_by_the_recipe(probe):
    house, _ = probe
    with pytest.raises(NotFound, match="Recipe not found: nope"):
        house.recipes.create("nope", {})
    cases = {
        "zone: is required": {},
        "zone: must be a zone id": {"zone": 5},
        "zone: zone not found: elsewhere": {"zone": "elsewhere"},
        "fail: must be a text": {"zone": house.zone_id, "fail": {"a": 1}},
        "fail: refused by the recipe": {"zone": house.zone_id, "fail": "validate"},
        "params: must be an object": [1],
    }
    for message, params in cases.items():
        with pytest.raises(BadRequest) as refused:
            house.recipes.create("probe", params)
        assert refused.value.message == f"Invalid params: {message}"
    created = house.recipes.create("probe", {"zone": house.zone_id, "unknown": 1})
    assert created["params"] == {"zone": house.zone_id}  # unknown params are dropped


def test_every_slot_type_is_checked_generically(house):
    from hausbox.recipes.context import ReadContext as ValidationContext
    from hausbox.recipes.params import check_params

    class AllTypes(Recipe):
        id = "all-types"
        slots = (
            Slot("n", "number", constraints={"min": 0, "max": 10}), Slot("d", "duration", default="10m"), Slot("t", "time"),
            Slot("b", "boolean"), Slot("k", "data-key"), Slot("e", "equipment", list=True, constraints={"equipmentType": "button"}),
            Slot("o", "object", list=True),
        )  # fmt: skip

    ctx = ValidationContext(house.engine.equipments, house.engine.zones, house.engine.aggregator, house.clock)
    button = house.button("button")
    stored, resolved = check_params(AllTypes(), {"n": 3, "t": "07:30", "b": True, "k": "contact", "e": [button], "o": [{"time": "06:00"}]}, ctx)
    assert resolved["d"] == "10m" and "d" not in stored and stored["o"] == [{"time": "06:00"}]
    bad = {
        "n: must be a number": {"n": "3"}, "n: must be at most 10": {"n": 11}, "n: must be at least 0": {"n": -1},
        "d: must be a duration like 10m": {"d": "10 minutes"}, "t: must be a time like 07:30": {"t": "7h30"},
        "b: must be true or false": {"b": "yes"}, "k: must be a data key": {"k": 3}, "e: must be a list": {"e": button},
        "e[0]: equipment not found: x": {"e": ["x"]}, "e: must not list the same item twice": {"e": [button, button]},
        "o[1]: must be an object": {"o": [{}, "06:00"]}, "o[0]: must be at most 10000 characters of JSON": {"o": [{"x": "y" * 10_000}]},
    }  # fmt: skip
    for message, params in bad.items():
        with pytest.raises(InvalidParams) as refused:
            check_params(AllTypes(), params, ctx)
        assert str(refused.value) == message
    for good in ("30s", "1h", "10 m", 1500):
        check_params(AllTypes(), {"d": good}, ctx)


def test_update_params_replaces_or_merges_and_restarts(probe):
    house, recipe = probe
    iid = house.recipe("probe", zone=house.zone_id, fail="nothing")
    house.recorder.clear()
    house.recipes.update_params(iid, {"zone": house.zone_id}, merge=False)
    assert house.recipes.get_instance(iid)["params"] == {"zone": house.zone_id}
    assert [e["type"] for e in house.recorder.events if e["type"].startswith("recipe.instance.s")][:2] == ["recipe.instance.stopped", "recipe.instance.started"]
    house.recipes.update_params(iid, {"fail": "x"})  # what a mode impact does: only what changes
    assert house.recipes.get_instance(iid)["params"] == {"zone": house.zone_id, "fail": "x"}
    house.recipes.update_params(iid, {"fail": None})
    assert house.recipes.get_instance(iid)["params"] == {"zone": house.zone_id}
    with pytest.raises(BadRequest, match="Invalid params: fail: refused by the recipe"):
        house.recipes.update_params(iid, {"fail": "validate"})
    assert house.recipes.get_instance(iid)["running"] is True  # a refused update leaves it running
    house.recipes.disable(iid)
    house.recipes.update_params(iid, {"fail": "y"})
    assert house.recipes.get_instance(iid)["running"] is False  # disabled stays stopped


def test_the_log_is_newest_first_and_limited(probe):
    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    for n in range(60):
        house.recipes._write_log(house.recipes.require(iid), f"line {n}")
    entries = house.recipes.log_entries(iid)
    assert len(entries) == 50 and entries[0]["message"] == "line 59" and entries[-1]["message"] == "line 10"
    assert set(entries[0]) == {"id", "instanceId", "timestamp", "message", "level"}
    assert entries[0]["timestamp"] == "2026-06-15T06:00:00.000Z"
    assert [e["message"] for e in house.recipes.log_entries(iid, 2)] == ["line 59", "line 58"]
    assert house.recipes.log_entries(iid, 1000)[-1]["message"] == "Instance created"


def test_instances_and_state_survive_a_restart_and_start_after_system_started(house):
    lamp = house.light("lamp")
    house.motion_sensor("pir")
    iid = house.recipe("motion-light", zone=house.zone_id, lights=[lamp], timeout="10m")
    paused = house.recipe("motion-light", zone=house.zone_id, lights=[lamp], timeout="1h")
    house.recipes.disable(paused)
    house.motion(True)
    house.motion(False)
    before = house.recipe_state(iid)
    assert before["timerExpiresAt"]

    house.restart(at="2026-06-15 08:05")
    assert house.recipes.get_instance(iid)["state"] == before
    assert house.recipes.get_instance(iid)["running"] is False  # not before system.started
    house.start()
    assert house.recipes.get_instance(iid)["running"] is True
    assert house.recipes.get_instance(paused)["running"] is False and house.recipes.get_instance(paused)["enabled"] is False
    house.advance(4 * 60)
    assert house.sent() == []
    house.advance(60)  # the timer armed before the restart fires at its time
    assert house.sent() == [("lamp", "state", "OFF")]


def test_a_deadline_passed_while_down_fires_on_return(house):
    lamp = house.light("lamp")
    house.motion_sensor("pir")
    iid = house.recipe("motion-light", zone=house.zone_id, lights=[lamp], timeout="10m")
    house.motion(True)
    house.motion(False)
    house.restart(at="2026-06-15 09:00")
    house.start()
    house.advance(0)
    assert house.sent() == [("lamp", "state", "OFF")]
    assert "timerExpiresAt" not in house.recipe_state(iid)


def test_held_off_nothing_starts(house):
    house.engine.workers.gate.close("shadow mode")
    lamp = house.light("lamp")
    house.motion_sensor("pir")
    iid = house.recipe("motion-light", zone=house.zone_id, lights=[lamp])
    assert house.recipes.get_instance(iid)["running"] is False
    house.motion(True)
    assert house.sent() == []


def test_an_instance_of_a_missing_recipe_is_kept_but_not_started(house):
    house.recipes.registry.register(ProbeRecipe())
    iid = house.recipe("probe", zone=house.zone_id)
    house.restart()
    house.start()
    assert house.recipes.get_instance(iid)["running"] is False
    house.recipes.registry.register(ProbeRecipe())  # the plugin arrives later
    assert house.recipes.get_instance(iid)["running"] is True


def test_deleting_an_instance_deletes_its_state_and_log(probe):
    from pony import orm

    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    house.motion(True)
    house.recipes.delete(iid)
    with orm.db_session:
        counts = [house.engine.db.select(f"SELECT COUNT(*) FROM {table} WHERE instance_id = $iid", {"iid": iid})[0] for table in ("recipe_state", "recipe_log")]
    assert counts == [0, 0]


def test_the_log_is_pruned_to_its_newest_rows(probe, monkeypatch):
    from hausbox.recipes import manager as manager_module

    monkeypatch.setattr(manager_module, "LOG_KEEP", 30)
    monkeypatch.setattr(manager_module, "LOG_PRUNE_EVERY", 10)
    house, _ = probe
    iid = house.recipe("probe", zone=house.zone_id)
    instance = house.recipes.require(iid)
    for n in range(100):
        house.recipes._write_log(instance, f"line {n}")
    kept = house.recipes.log_entries(iid, 1000)
    assert 30 <= len(kept) < 40 and kept[0]["message"] == "line 99"
