"""Button actions in process: a press runs the bindings whose actionValue matches exactly; every
effect type; failures skipped; configs checked against what exists when written."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, NotFound
from tests.modes.rig import ROOT


def bind(rig, button, action_value, effect_type, **config):
    return rig.engine.button_actions.create(button["id"], {"actionValue": action_value, "effectType": effect_type, "config": config})


def test_a_press_activates_a_mode_and_only_an_exact_value_matches(rig):
    button, lamp = rig.button("remote"), rig.light("lamp")
    modes = rig.engine.modes
    night = rig.mode("Night")
    modes.set_impact(night, ROOT, [{"type": "order", "equipmentId": lamp["id"], "orderAlias": "state", "value": "OFF"}])
    bind(rig, button, "double", "mode_activate", modeId=night)
    for value in ("single", "Double", "double ", "hold"):
        rig.press("remote", value)
    assert not modes.is_active(night) and rig.sent() == []
    rig.press("remote", "double")
    assert modes.is_active(night)
    assert rig.sent() == [("lamp", "state", "OFF")]
    assert rig.of("equipment.order.executed")[-1]["source"]["kind"] == "mode"


def test_mode_toggle_flips_between_a_and_b_on_identical_presses(rig):
    button = rig.button("remote")
    modes = rig.engine.modes
    home, away = rig.mode("Home"), rig.mode("Away")
    bind(rig, button, "single", "mode_toggle", modeAId=home, modeBId=away)
    states = []
    for _ in range(3):  # the same value each time: action is a retrigger category
        rig.press("remote", "single")
        states.append((modes.is_active(home), modes.is_active(away)))
    assert states == [(True, False), (False, True), (True, False)]

    solo = rig.mode("Party")
    bind(rig, button, "hold", "mode_toggle", modeAId=solo)
    rig.press("remote", "hold")
    rig.press("remote", "hold")
    assert [e["modeId"] for e in rig.of("mode.activated")][-1] == solo
    assert [e["modeId"] for e in rig.of("mode.deactivated")][-1] == solo


def test_equipment_order_recipe_toggle_and_zone_order(rig):
    kitchen = rig.zone("Kitchen")
    pantry = rig.zone("Pantry", kitchen)
    button = rig.button("wall", kitchen)
    lamp = rig.light("lamp")
    rig.light("ceiling", kitchen)
    rig.light("shelf", pantry)
    bind(rig, button, "single", "equipment_order", equipmentId=lamp["id"], orderAlias="brightness", value=120)
    bind(rig, button, "single", "recipe_toggle", instanceId="inst-1", enabled=False)
    bind(rig, button, "double", "zone_order", zoneId=kitchen, orderKey="allLightsOff")

    rig.press("wall", "single")
    assert rig.sent() == [("lamp", "brightness", 120)]
    source = rig.of("equipment.order.executed")[-1]["source"]
    assert source["kind"] == "button" and source["equipmentId"] == button["id"] and source["actionValue"] == "single"
    assert rig.recipes.calls == [("disable", "inst-1", None)]
    rig.press("wall", "double")
    assert sorted(rig.sent()[1:]) == [("ceiling", "state", "OFF"), ("shelf", "state", "OFF")]


def test_a_failing_binding_does_not_stop_the_others(rig):
    button, lamp = rig.button("remote"), rig.light("lamp")
    gone = rig.mode("Gone")
    bind(rig, button, "single", "mode_activate", modeId=gone)
    bind(rig, button, "single", "recipe_toggle", instanceId="inst-2", enabled=True)
    bind(rig, button, "single", "equipment_order", equipmentId=lamp["id"], orderAlias="state", value="toggle")
    rig.engine.modes.delete(gone)
    rig.recipes.fail.add("inst-2")
    rig.press("remote", "single")
    assert rig.sent() == [("lamp", "state", "TOGGLE")]


def test_only_the_action_alias_of_an_enabled_bound_equipment_counts(rig):
    button, other = rig.button("remote"), rig.button("other")
    mode = rig.mode("Cosy")
    bind(rig, button, "100", "mode_activate", modeId=mode)
    rig.fake.report("remote", {"battery": 100})  # not the action alias
    rig.press("other", "100")  # not this equipment's bindings
    assert not rig.engine.modes.is_active(mode)
    rig.engine.equipments.update(button["id"], {"enabled": False})
    rig.press("remote", "100")
    assert not rig.engine.modes.is_active(mode)
    rig.engine.equipments.update(button["id"], {"enabled": True})
    rig.press("remote", 100)  # compared as text
    assert rig.engine.modes.is_active(mode)


def test_bindings_are_listed_updated_removed_and_go_with_their_equipment(rig):
    actions = rig.engine.button_actions
    button, lamp = rig.button("remote"), rig.light("lamp")
    a, b = rig.mode("A"), rig.mode("B")
    first = bind(rig, button, "single", "mode_activate", modeId=a)
    second = bind(rig, button, "double", "mode_toggle", modeAId=b, modeBId=a)
    bind(rig, button, "hold", "equipment_order", equipmentId=lamp["id"], orderAlias="state", value="ON")
    assert [x["id"] for x in actions.list_json(button["id"])][:2] == [first["id"], second["id"]]
    assert [(t["actionValue"], t["equipmentName"]) for t in actions.triggers_of_mode(a)] == [("single", "remote"), ("double", "remote")]
    assert [t["id"] for t in actions.triggers_of_mode(b)] == [second["id"]]

    changed = actions.update(button["id"], first["id"], {"actionValue": "triple", "config": {"modeId": b}})
    assert (changed["actionValue"], changed["effectType"], changed["config"]) == ("triple", "mode_activate", {"modeId": b})
    with pytest.raises(BadRequest, match="config.zoneId is required"):
        actions.update(button["id"], first["id"], {"effectType": "zone_order"})  # a new type needs its config
    rig.press("remote", "triple")
    assert rig.engine.modes.is_active(b)
    actions.delete(button["id"], first["id"])
    with pytest.raises(NotFound):
        actions.delete(button["id"], first["id"])
    with pytest.raises(NotFound):
        actions.update(lamp["id"], second["id"], {"actionValue": "x"})  # not that equipment's binding

    rig.engine.equipments.delete(button["id"])
    assert actions.triggers_of_mode(a) == []
    rig.restart()
    assert rig.engine.button_actions.triggers_of_mode(a) == []
    with pytest.raises(NotFound):
        rig.engine.button_actions.list_json(button["id"])


def test_bindings_survive_a_restart(rig):
    button = rig.button("remote")
    mode = rig.mode("Night")
    bind(rig, button, "single", "mode_activate", modeId=mode)
    rig.restart()
    rig.press("remote", "single")
    assert rig.engine.modes.is_active(mode)


@pytest.mark.parametrize(
    "effect_type, config, message",
    [
        ("mode_activate", {}, "config.modeId is required"),
        ("mode_activate", {"modeId": "ghost"}, "config.modeId: mode not found: ghost"),
        ("mode_activate", {"modeId": 3}, "config.modeId must be a string"),
        ("mode_toggle", {"modeBId": "MODE"}, "config.modeAId is required"),
        ("mode_toggle", {"modeAId": "MODE", "modeBId": "ghost"}, "config.modeBId: mode not found: ghost"),
        ("mode_toggle", {"modeAId": "MODE", "modeBId": "MODE"}, "config.modeBId must differ from config.modeAId"),
        ("equipment_order", {"equipmentId": "ghost", "orderAlias": "state", "value": "ON"}, "config.equipmentId: equipment not found: ghost"),
        ("equipment_order", {"equipmentId": "LAMP", "orderAlias": "speed", "value": "v1"}, "config.orderAlias: equipment lamp has no order speed"),
        ("equipment_order", {"equipmentId": "LAMP", "orderAlias": "state", "value": "dim"}, "config.value must be one of ON, OFF, TOGGLE"),
        ("recipe_toggle", {"instanceId": "ghost", "enabled": True}, "config.instanceId: recipe instance not found: ghost"),
        ("recipe_toggle", {"instanceId": "inst-1"}, "config.enabled is required"),
        ("zone_order", {"zoneId": "ghost", "orderKey": "allLightsOn"}, "config.zoneId: zone not found: ghost"),
        ("zone_order", {"zoneId": ROOT, "orderKey": "allLightsBlink"}, "config.orderKey must be one of"),
        ("zone_order", {"zoneId": ROOT, "orderKey": "allLightsBrightness"}, "config.value is required for allLightsBrightness"),
        ("scene", {}, "effectType must be one of"),
    ],
)
def test_configs_are_checked_against_what_exists(rig, effect_type, config, message):
    button, lamp = rig.button("remote"), rig.light("lamp")
    mode = rig.mode("Mode")
    config = {k: {"MODE": mode, "LAMP": lamp["id"]}.get(v, v) if isinstance(v, str) else v for k, v in config.items()}
    with pytest.raises(BadRequest) as refused:
        rig.engine.button_actions.create(button["id"], {"actionValue": "single", "effectType": effect_type, "config": config})
    assert refused.value.message.startswith(message)
    assert rig.engine.button_actions.list_json(button["id"]) == []


def test_a_recipe_action_is_refused_while_there_is_no_recipe_service(rig):
    button = rig.button("remote")
    rig.engine.recipes = None
    with pytest.raises(BadRequest, match="recipe instance not found"):
        bind(rig, button, "single", "recipe_toggle", instanceId="inst-1", enabled=True)
    rig.engine.recipes = rig.recipes
