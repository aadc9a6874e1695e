"""Modes in process: impacts applied on activation (failures skipped), idempotent state changes,
nothing reverted, apply-to-zone, write-time checks of impact actions, persistence, events."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, NotFound
from hausbox.equipments import orders as orders_module
from tests.inprocess import ROOT


def order(equipment, alias, value):
    return {"type": "order", "equipmentId": equipment, "orderAlias": alias, "value": value}


def test_activation_applies_every_zone_impact_in_order_then_announces(house):
    modes = house.engine.modes
    kitchen = house.zone("Kitchen")
    hall, spot = house.light("hall"), house.light("spot", kitchen)
    night = house.mode("Night")
    modes.set_impact(night, ROOT, [order(hall, "state", "off"), order(hall, "brightness", 10)])
    modes.set_impact(night, kitchen, [order(spot, "state", "OFF"), {"type": "recipe_toggle", "instanceId": "inst-1", "enabled": False}])
    house.recorder.clear()

    assert modes.activate(night) is True
    assert house.sent() == [("hall", "state", "OFF"), ("hall", "brightness", 10), ("spot", "state", "OFF")]
    assert house.recipes.calls == [("disable", "inst-1", None)]
    executed = house.events("equipment.order.executed")
    assert executed[0]["source"] == {"kind": "mode", "modeId": night, "modeName": "Night"}
    types = house.recorder.types()
    assert types.index("mode.activated") > max(i for i, t in enumerate(types) if t == "equipment.order.executed")
    assert house.events("mode.activated")[-1] | {"type": None} == {"type": None, "modeId": night, "modeName": "Night"}
    assert modes.get_json(night)["active"] is True and modes.get_json(night)["state"] == "active"


def test_activate_and_deactivate_are_idempotent_and_nothing_is_reverted(house):
    modes = house.engine.modes
    lamp = house.light("lamp")
    away, guests = house.mode("Away"), house.mode("Guests")
    modes.set_impact(away, ROOT, [order(lamp, "state", "OFF"), {"type": "recipe_params", "instanceId": "inst-2", "params": {"timeout": "5m"}}])
    modes.activate(away)
    modes.activate(guests)  # several modes may be active at once
    house.recorder.clear()
    sent = house.sent()

    assert modes.activate(away) is False  # already active: nothing applied, nothing emitted
    assert house.sent() == sent and house.events("mode.activated") == []
    assert modes.deactivate(away) is True
    assert house.sent() == sent  # deactivation reverts no order...
    assert house.recipes.instances["inst-2"]["params"] == {"timeout": "5m"}  # ...and no recipe change
    assert [e["modeId"] for e in house.events("mode.deactivated")] == [away]
    assert modes.deactivate(away) is False and len(house.events("mode.deactivated")) == 1
    assert [m["active"] for m in modes.all_json()] == [False, True]  # sorted by name: Away, Guests


def test_a_failing_action_is_logged_and_skipped(house, monkeypatch, caplog):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0.01)
    modes = house.engine.modes
    first, gone, last = house.light("first"), house.light("gone"), house.light("last")
    mode = house.mode("Evening")
    modes.set_impact(mode, ROOT, [
        order(first, "state", "ON"),
        order(gone, "state", "ON"),
        {"type": "recipe_toggle", "instanceId": "inst-1", "enabled": True},
        order(last, "state", "ON"),
    ])  # fmt: skip
    house.engine.equipments.delete(gone)  # removed after the impact was written
    house.recipes.fail.add("inst-1")
    house.fake.fail_next = 2  # the first order fails, and its one retry too

    assert modes.activate(mode) is True
    assert house.sent() == [("last", "state", "ON")]
    assert house.events("mode.activated") and house.engine.modes.is_active(mode)
    warnings = [r.getMessage() for r in caplog.records if r.name == "hausbox.modes"]
    assert any("Equipment not found" in w for w in warnings) and any("inst-1" in w for w in warnings)
    assert any("Order could not be sent" in w for w in warnings)


def test_apply_to_zone_runs_that_zone_only_and_keeps_the_state(house):
    modes = house.engine.modes
    bedroom, office = house.zone("Bedroom"), house.zone("Office")
    bed, desk = house.light("bed", bedroom), house.light("desk", office)
    mode = house.mode("Reading")
    modes.set_impact(mode, bedroom, [order(bed, "state", "ON")])
    modes.set_impact(mode, office, [order(desk, "state", "ON")])

    assert modes.apply_to_zone(mode, office) == {"ok": True, "applied": 1, "failed": 0}
    assert house.sent() == [("desk", "state", "ON")]
    assert modes.is_active(mode) is False and house.events("mode.activated") == []
    with pytest.raises(NotFound, match="no impact"):
        modes.apply_to_zone(mode, ROOT)
    with pytest.raises(NotFound, match="Zone not found"):
        modes.apply_to_zone(mode, "nowhere")
    with pytest.raises(NotFound, match="Mode not found"):
        modes.apply_to_zone("ghost", office)


@pytest.mark.parametrize(
    "action, message",
    [
        ({"type": "order", "orderAlias": "state", "value": "ON"}, "actions[0].equipmentId is required"),
        ({"type": "order", "equipmentId": "ghost", "orderAlias": "state", "value": "ON"}, "actions[0].equipmentId: equipment not found: ghost"),
        ({"type": "order", "equipmentId": "LAMP", "orderAlias": "colour", "value": "red"}, "actions[0].orderAlias: equipment lamp has no order colour"),
        ({"type": "order", "equipmentId": "LAMP", "orderAlias": "state"}, "actions[0].value is required"),
        ({"type": "order", "equipmentId": "LAMP", "orderAlias": "state", "value": "blink"}, "actions[0].value must be one of ON, OFF, TOGGLE"),
        ({"type": "order", "equipmentId": "LAMP", "orderAlias": "brightness", "value": 999}, "actions[0].value must be at most 254"),
        ({"type": "order", "equipmentId": 5, "orderAlias": "state", "value": "ON"}, "actions[0].equipmentId must be a string"),
        ({"type": "recipe_toggle", "instanceId": "inst-1"}, "actions[0].enabled is required"),
        ({"type": "recipe_toggle", "instanceId": "inst-1", "enabled": "yes"}, "actions[0].enabled must be a boolean"),
        ({"type": "recipe_toggle", "instanceId": "nope", "enabled": True}, "actions[0].instanceId: recipe instance not found: nope"),
        ({"type": "recipe_params", "instanceId": "inst-1", "params": []}, "actions[0].params must be an object"),
        ({"type": "recipe_params", "params": {}}, "actions[0].instanceId is required"),
        ({"type": "scene"}, "actions[0].type must be one of order, recipe_toggle, recipe_params"),
    ],
)
def test_impact_actions_are_checked_when_written(house, action, message):
    lamp = house.light("lamp")
    action = {k: (lamp if v == "LAMP" else v) for k, v in action.items()}
    mode = house.mode("Checked")
    with pytest.raises(BadRequest) as refused:
        house.engine.modes.set_impact(mode, ROOT, [action])
    assert refused.value.message == message
    assert house.engine.modes.get_json(mode)["impacts"] == []


def test_impacts_are_upserted_listed_per_zone_and_removed(house):
    modes = house.engine.modes
    lamp = house.light("lamp")
    day, night = house.mode("Day"), house.mode("Night")
    first = modes.set_impact(night, ROOT, [order(lamp, "state", "OFF")])
    again = modes.set_impact(night, ROOT, [{**order(lamp, "state", "ON"), "extra": 1}])
    assert again["id"] == first["id"] and again["actions"] == [order(lamp, "state", "ON") | {"type": "order"}]
    assert "extra" not in again["actions"][0]
    modes.set_impact(day, ROOT, [])
    listed = modes.zone_impacts_json(ROOT)
    assert [(i["modeName"], i["modeId"], i["zoneId"]) for i in listed] == [("Day", day, ROOT), ("Night", night, ROOT)]
    assert len(house.events("mode.updated")) == 3
    modes.delete_impact(night, ROOT)
    assert modes.get_json(night)["impacts"] == []
    with pytest.raises(NotFound):
        modes.delete_impact(night, ROOT)


def test_a_removed_zone_takes_its_impacts_along(house):
    modes = house.engine.modes
    attic = house.zone("Attic")
    mode = house.mode("Storm")
    modes.set_impact(mode, attic, [])
    house.engine.zones.delete(attic)
    assert modes.get_json(mode)["impacts"] == []
    house.restart()
    assert house.engine.modes.get_json(mode)["impacts"] == []


def test_state_and_impacts_survive_a_restart_without_being_reapplied(house):
    lamp = house.light("lamp")
    mode = house.mode("Cinema")
    house.engine.modes.set_impact(mode, ROOT, [order(lamp, "brightness", 30)])
    house.engine.modes.activate(mode)
    house.restart()
    modes = house.engine.modes
    assert modes.is_active(mode) is True
    assert modes.get_json(mode)["impacts"][0]["actions"] == [order(lamp, "brightness", 30)]
    assert house.sent() == []  # a fresh fake: nothing sent at start-up
    modes.deactivate(mode)
    modes.activate(mode)
    assert house.sent() == [("lamp", "brightness", 30)]


def test_crud_events(house):
    modes = house.engine.modes
    created = modes.create(" Holiday ", icon="palm", description="away for long")
    assert (created["name"], created["icon"], created["description"], created["active"], created["impacts"]) == ("Holiday", "palm", "away for long", False, [])
    updated = modes.update(created["id"], {"name": "Vacation", "icon": None})
    assert (updated["name"], updated["icon"], updated["description"]) == ("Vacation", None, "away for long")
    modes.delete(created["id"])
    assert [e["type"] for e in house.recorder.events if e["type"].startswith("mode.")] == ["mode.created", "mode.updated", "mode.removed"]
    assert house.events("mode.created")[0]["mode"]["id"] == created["id"]
    assert house.events("mode.removed")[0] | {"type": None} == {"type": None, "modeId": created["id"], "modeName": "Vacation"}
    with pytest.raises(NotFound):
        modes.get(created["id"])
