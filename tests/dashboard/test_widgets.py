"""Dashboard widgets in-process: display order, updates, and widgets leaving with what they show."""

from __future__ import annotations

import pytest

from hausbox.core.errors import BadRequest, NotFound

def test_widgets_keep_their_order_across_a_restart(house):
    engine = house.engine
    zone = engine.zones.create("Hall")["id"]
    lamp = engine.equipments.create("Lamp", "light_onoff", zone)["id"]
    board = engine.dashboard
    a = board.create({"type": "equipment", "equipmentId": lamp, "label": "A"})
    b = board.create({"type": "zone", "zoneId": zone, "family": "lights"})
    c = board.create({"type": "zone", "zoneId": zone, "family": "sensors", "icon": "thermometer", "config": {"compact": True}})
    assert [w["displayOrder"] for w in (a, b, c)] == [0, 1, 2]
    assert c == {
        "id": c["id"], "type": "zone", "equipmentId": None, "zoneId": zone, "family": "sensors", "label": None,
        "icon": "thermometer", "config": {"compact": True}, "displayOrder": 2, "createdAt": c["createdAt"],
    }  # fmt: skip
    board.reorder([c["id"], a["id"], b["id"]])
    assert [w["id"] for w in board.list()] == [c["id"], a["id"], b["id"]]
    house.restart()
    assert [w["id"] for w in house.engine.dashboard.list()] == [c["id"], a["id"], b["id"]]


def test_update_changes_only_what_is_given(house):
    engine = house.engine
    zone = engine.zones.create("Hall")["id"]
    board = engine.dashboard
    widget = board.create({"type": "zone", "zoneId": zone, "family": "heating", "label": "Heat", "icon": "fire", "config": {"a": 1}})
    assert board.update(widget["id"], {}) == widget
    assert board.update(widget["id"], {"label": "Warmth"}) == {**widget, "label": "Warmth"}
    assert board.update(widget["id"], {"config": None, "icon": None}) == {**widget, "label": "Warmth", "config": None, "icon": None}
    with pytest.raises(NotFound):
        board.update("nope", {})
    with pytest.raises(NotFound):
        board.delete("nope")


def test_references_must_exist_and_order_must_match(house):
    engine = house.engine
    board = engine.dashboard
    with pytest.raises(BadRequest, match="Equipment not found"):
        board.create({"type": "equipment", "equipmentId": "ghost"})
    with pytest.raises(BadRequest, match="Zone not found"):
        board.create({"type": "zone", "zoneId": "ghost", "family": "lights"})
    one = board.create({"type": "zone", "zoneId": engine.zones.root().id, "family": "lights"})
    for order in ([], [one["id"], one["id"]], [one["id"], "other"], ["other"]):
        with pytest.raises(BadRequest):
            board.reorder(order)


def test_widgets_go_away_with_their_equipment_or_zone(house):
    engine = house.engine
    room = engine.zones.create("Spare room")["id"]
    lamp = engine.equipments.create("Lamp", "light_onoff", room)["id"]
    board = engine.dashboard
    keep = board.create({"type": "zone", "zoneId": engine.zones.root().id, "family": "shutters"})
    board.create({"type": "equipment", "equipmentId": lamp})
    board.create({"type": "zone", "zoneId": room, "family": "lights"})
    engine.equipments.delete(lamp)
    assert [w["type"] for w in board.list()] == ["zone", "zone"]
    engine.zones.delete(room)
    assert board.list() == [keep]
