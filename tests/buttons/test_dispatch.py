"""Button actions in process: a press runs the bindings whose actionValue matches exactly; every
effect type; failures skipped; configs checked against what exists when written."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, NotFound
from tests.inprocess import ROOT


def bind(house, button, action_value, effect_type, **config):
    return house.engine.button_actions.create(button, {"actionValue": action_value, "effectType": effect_type, "config": config})


def test_a_press_activates_a_mode_and_only_an_exact_value_matches(house):
    button, lamp = house.button("remote"), house.light("lamp")
    modes = house.engine.modes
    night = house.mode("Night")
    modes.set_impact(night, ROOT, [{"type": "order", "equipmentId": lamp, "orderAlias": "state", "value": "OFF"}])
    bind(house, button, "double", "mode_activate", modeId=night)
    for value in ("single", "Double", "double ", "hold"):
        house.press("remote", value)
    assert not modes.is_active(night) and house.sent() == []
    house.press("remote", "double")
    assert modes.is_active(night)
    assert house.sent() == [("lamp", "state", "OFF")]
    assert house.events("equipment.order.executed")[-1]["source"]["kind"] == "mode"


def test_mode_toggle_flips_between_a_and_b_on_identical_presses(house):
    button = house.button("remote")
    modes = house.engine.modes
    home, away = house.mode("Home"), house.mode("Away")
    bind(house, button, "single", "mode_toggle", modeAId=home, modeBId=away)
    states = []
    for _ in range(3):  # the same value each time: action is a retrigger category
        house.press("remote", "single")
        states.append((modes.is_active(home), modes.is_active(away)))
    assert states == [(True, False), (False, True), (True, False)]

    solo = house.mode("Party")
    bind(house, button, "hold", "mode_toggle", modeAId=solo)
    house.press("remote", "hold")
    house.press("remote", "hold")
    assert [e["modeId"] for e in house.events("mode.activated")][-1] == solo
    assert [e["modeId"] for e in house.events("mode.deactivated")][-1] == solo


def test_equipment_order_recipe_toggle_and_zone_order(house):
    kitchen = house.zone("Kitchen")
    pantry = house.zone("Pantry", kitchen)
    button = house.button("wall", kitchen)
    lamp = house.light("lamp")
    house.light("ceiling", kitchen)
    house.light("shelf", pantry)
    bind(house, button, "single", "equipment_order", equipmentId=lamp, orderAlias="brightness", value=120)
    bind(house, button, "single", "recipe_toggle", instanceId="inst-1", enabled=False)
    bind(house, button, "double", "zone_order", zoneId=kitchen, orderKey="allLightsOff")

    house.press("wall", "single")
    assert house.sent() == [("lamp", "brightness", 120)]
    source = house.events("equipment.order.executed")[-1]["source"]
    assert source["kind"] == "button" and source["equipmentId"] == button and source["actionValue"] == "single"
    assert house.recipes.calls == [("disable", "inst-1", None)]
    house.press("wall", "double")
    assert sorted(house.sent()[1:]) == [("ceiling", "state", "OFF"), ("shelf", "state", "OFF")]


def test_a_failing_binding_does_not_stop_the_others(house):
    button, lamp = house.button("remote"), house.light("lamp")
    gone = house.mode("Gone")
    bind(house, button, "single", "mode_activate", modeId=gone)
    bind(house, button, "single", "recipe_toggle", instanceId="inst-2", enabled=True)
    bind(house, button, "single", "equipment_order", equipmentId=lamp, orderAlias="state", value="toggle")
    house.engine.modes.delete(gone)
    house.recipes.fail.add("inst-2")
    house.press("remote", "single")
    assert house.sent() == [("lamp", "state", "TOGGLE")]


def test_only_the_action_alias_of_an_enabled_bound_equipment_counts(house):
    button, other = house.button("remote"), house.button("other")
    mode = house.mode("Cosy")
    bind(house, button, "100", "mode_activate", modeId=mode)
    house.fake.report("remote", {"battery": 100})  # not the action alias
    house.press("other", "100")  # not this equipment's bindings
    assert not house.engine.modes.is_active(mode)
    house.engine.equipments.update(button, {"enabled": False})
    house.press("remote", "100")
    assert not house.engine.modes.is_active(mode)
    house.engine.equipments.update(button, {"enabled": True})
    house.press("remote", 100)  # compared as text
    assert house.engine.modes.is_active(mode)


def test_bindings_are_listed_updated_removed_and_go_with_their_equipment(house):
    actions = house.engine.button_actions
    button, lamp = house.button("remote"), house.light("lamp")
    a, b = house.mode("A"), house.mode("B")
    first = bind(house, button, "single", "mode_activate", modeId=a)
    second = bind(house, button, "double", "mode_toggle", modeAId=b, modeBId=a)
    bind(house, button, "hold", "equipment_order", equipmentId=lamp, orderAlias="state", value="ON")
    assert [x["id"] for x in actions.list_json(button)][:2] == [first["id"], second["id"]]
    assert [(t["actionValue"], t["equipmentName"]) for t in actions.triggers_of_mode(a)] == [("single", "remote"), ("double", "remote")]
    assert [t["id"] for t in actions.triggers_of_mode(b)] == [second["id"]]

    changed = actions.update(button, first["id"], {"actionValue": "triple", "config": {"modeId": b}})
    assert (changed["actionValue"], changed["effectType"], changed["config"]) == ("triple", "mode_activate", {"modeId": b})
    with pytest.raises(BadRequest, match="config.zoneId is required"):
        actions.update(button, first["id"], {"effectType": "zone_order"})  # a new type needs its config
    house.press("remote", "triple")
    assert house.engine.modes.is_active(b)
    actions.delete(button, first["id"])
    with pytest.raises(NotFound):
        actions.delete(button, first["id"])
    with pytest.raises(NotFound):
        actions.update(lamp, second["id"], {"actionValue": "x"})  # not that equipment's binding

    house.engine.equipments.delete(button)
    assert actions.triggers_of_mode(a) == []
    house.restart()
    assert house.engine.button_actions.triggers_of_mode(a) == []
    with pytest.raises(NotFound):
        house.engine.button_actions.list_json(button)


def test_bindings_survive_a_restart(house):
    button = house.button("remote")
    mode = house.mode("Night")
    bind(house, button, "single", "mode_activate", modeId=mode)
    house.restart()
    house.press("remote", "single")
    assert house.engine.modes.is_active(mode)


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
def test_configs_are_checked_against_what_exists(house, effect_type, config, message):
    button, lamp = house.button("remote"), house.light("lamp")
    mode = house.mode("Mode")
    config = {k: {"MODE": mode, "LAMP": lamp}.get(v, v) if isinstance(v, str) else v for k, v in config.items()}
    with pytest.raises(BadRequest) as refused:
        house.engine.button_actions.create(button, {"actionValue": "single", "effectType": effect_type, "config": config})
    assert refused.value.message.startswith(message)
    assert house.engine.button_actions.list_json(button) == []


def test_a_recipe_action_is_refused_while_there_is_no_recipe_service(house):
    button = house.button("remote")
    house.engine.recipes = None
    with pytest.raises(BadRequest, match="recipe instance not found"):
        bind(house, button, "single", "recipe_toggle", instanceId="inst-1", enabled=True)
    house.engine.recipes = house.stand_in_recipes
