"""The activity feed in-process, on a ManualClock: items from bus events, zone filter, retention, storage."""

from __future__ import annotations

import json
from datetime import timezone
from types import SimpleNamespace

import pytest
from pony import orm

from hausbox.activity import feed as feed_module
from hausbox.devices.discovery import DataSpec
from hausbox.equipments import orders as orders_module
from tests.inprocess import light_specs

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY_S = 24 * 3600


@pytest.fixture
def house(make_house):
    """On a ManualClock at T0 (UTC)."""
    return make_house(start=T0, tz=timezone.utc)


@pytest.fixture
def places(house) -> SimpleNamespace:
    """Zones Upstairs > Bedroom and Kitchen, and the "Bedside lamp" (device "lamp") in the bedroom: their ids."""
    upstairs = house.zone("Upstairs")
    bedroom = house.zone("Bedroom", upstairs)
    kitchen = house.zone("Kitchen")
    data, orders = light_specs()
    lamp = house.equipment("Bedside lamp", "light_dimmable", [house.fake.discover("lamp", data, orders)], zone_id=bedroom)
    return SimpleNamespace(upstairs=upstairs, bedroom=bedroom, kitchen=kitchen, lamp=lamp)


def stored(house) -> int:
    with orm.db_session:
        return house.engine.db.select("SELECT COUNT(*) FROM activity_items")[0]


def test_orders_become_items_with_their_source(house, places):
    sources = [
        {"kind": "recipe", "instanceId": "inst-1", "recipeName": "Night light"},
        {"kind": "mode", "modeId": "m-1"},
        {"kind": "manual", "userId": "u-1"},
        {"kind": "button", "equipmentId": "b-1"},
        {"kind": "external", "channel": "delivery-retry"},
        {"kind": "manual", "timedAction": True},
    ]
    for source in sources:
        house.engine.orders.execute(places.lamp, "state", "on", source)
    house.engine.orders.execute(places.lamp, "brightness", 120)  # no source given: manual
    items = house.engine.activity.query()
    assert [i["source"] for i in items] == [{"kind": "manual"}, *reversed(sources)]
    newest = items[0]
    assert newest["category"] == "order" and newest["zoneId"] == places.bedroom and newest["timestamp"] == T0
    assert newest["message"] == {
        "template": "order.executed",
        "params": {"equipmentId": places.lamp, "equipmentName": "Bedside lamp", "alias": "brightness", "value": 120, "zoneName": "Bedroom"},
    }
    assert isinstance(newest["id"], str) and len({i["id"] for i in items}) == len(items)


def test_a_recipe_source_without_its_name_is_completed_and_an_unknown_kind_is_external(house, places):
    house.engine.activity.recipe_info = lambda instance_id: {"recipeName": f"Recipe of {instance_id}"}
    house.engine.orders.execute(places.lamp, "state", "ON", {"kind": "recipe", "instanceId": "i-9"})
    house.engine.orders.execute(places.lamp, "state", "OFF", {"kind": "telepathy"})
    second, first = house.engine.activity.query(limit=2)
    assert first["source"] == {"kind": "recipe", "instanceId": "i-9", "recipeName": "Recipe of i-9"}
    assert second["source"]["kind"] == "external"


def test_a_failed_order_is_an_item_too_with_its_error(house, places, monkeypatch):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0)
    house.fake.fail_next = 2
    with pytest.raises(orders_module.OrderFailed):
        house.engine.orders.execute(places.lamp, "state", "ON", {"kind": "button"})
    orders = [i for i in house.engine.activity.query() if i["category"] == "order"]
    assert len(orders) == 1
    failed = orders[0]
    assert failed["message"]["template"] == "order.failed" and failed["message"]["params"]["error"] == "radio jammed"
    assert failed["source"] == {"kind": "button"} and failed["zoneId"] == places.bedroom
    # the dispatch failure raised a system alarm: a global item
    alarm = next(i for i in house.engine.activity.query() if i["category"] == "alarm")
    assert alarm["zoneId"] is None and alarm["message"]["template"] == "alarm.raised"
    assert "source" not in alarm


def test_each_item_is_announced_on_the_bus(house, places):
    house.recorder.clear()
    house.engine.orders.execute(places.lamp, "state", "ON")
    added = house.events("activity.added")
    assert len(added) == 1 and added[0]["item"] == house.engine.activity.query(limit=1)[0]
    assert set(added[0]) == {"type", "item"}


def _motion_sensor(house, name: str, zone_id: str) -> str:
    device = house.fake.discover(name, [DataSpec("occupancy", "boolean", "motion"), DataSpec("temperature", "number", "temperature")])
    return house.engine.equipments.create(name, "sensor", zone_id, device_ids=[device.id])["id"]


def test_motion_is_one_item_per_zone_when_it_starts_and_when_it_ends(house, places):
    first = _motion_sensor(house, "pir-1", places.bedroom)
    _motion_sensor(house, "pir-2", places.bedroom)
    house.fake.report("pir-1", {"occupancy": False})
    house.fake.report("pir-2", {"occupancy": False})
    assert house.engine.activity.query() == []
    house.fake.report("pir-1", {"occupancy": True})
    house.fake.report("pir-1", {"occupancy": True})  # a repeat (re-trigger) is not news
    house.fake.report("pir-2", {"occupancy": True})  # the zone already has motion
    house.fake.report("pir-1", {"temperature": 19.5})  # not motion
    house.fake.report("pir-1", {"occupancy": False})  # pir-2 still sees someone
    assert [i["message"]["template"] for i in house.engine.activity.query()] == ["motion.detected"]
    house.fake.report("pir-2", {"occupancy": False})
    cleared, detected = house.engine.activity.query()
    assert cleared["message"]["template"] == "motion.cleared" and cleared["zoneId"] == places.bedroom
    assert cleared["category"] == detected["category"] == "motion" and "source" not in cleared
    assert detected["message"]["params"] == {"zoneId": places.bedroom, "zoneName": "Bedroom", "equipmentId": first, "equipmentName": "pir-1"}
    # the parent zone's aggregated motion changed too, but no item repeats it there
    assert all(i["zoneId"] == places.bedroom for i in house.engine.activity.query())


def test_recipe_mode_sunlight_and_alarm_events(house, places):
    bus = house.engine.bus
    house.engine.activity.recipe_info = lambda instance_id: {"recipeName": "Presence lights", "zoneId": places.kitchen}
    bus.emit("recipe.instance.started", instanceId="r-1", recipeId="presence")
    bus.emit("recipe.instance.error", instanceId="r-1", recipeId="presence", error="slot missing")
    bus.emit("recipe.instance.stopped", instanceId="r-1", recipeId="presence")
    bus.emit("mode.activated", modeId="m-1", modeName="Away")
    bus.emit("mode.deactivated", modeId="m-1", modeName="Away")
    sun = {"isDaylight": False, "sunrise": "08:40", "sunset": "17:10"}
    house.engine.aggregator.root_extras = lambda: dict(sun)
    bus.emit("system.started")  # the feed learns the current daylight: no item
    bus.emit("sunlight.changed")  # nothing moved
    sun["isDaylight"] = True
    bus.emit("sunlight.changed")
    sun["sunrise"] = "08:39"
    bus.emit("sunlight.changed")  # new times, same daylight: no item
    sun["isDaylight"] = False
    bus.emit("sunlight.changed")
    house.engine.alarms.raise_alarm("disk", "error", "system", "Disk almost full")
    house.engine.alarms.resolve("disk")
    items = list(reversed(house.engine.activity.query()))
    assert [(i["category"], i["message"]["template"]) for i in items] == [
        ("recipe", "recipe.started"), ("recipe", "recipe.error"), ("recipe", "recipe.stopped"),
        ("mode", "mode.activated"), ("mode", "mode.deactivated"),
        ("sunlight", "sunlight.sunrise"), ("sunlight", "sunlight.sunset"),
        ("alarm", "alarm.raised"), ("alarm", "alarm.resolved"),
    ]  # fmt: skip
    assert [i["zoneId"] for i in items] == [places.kitchen] * 3 + [None] * 6
    assert items[1]["message"]["params"] == {"instanceId": "r-1", "recipeId": "presence", "recipeName": "Presence lights", "error": "slot missing"}
    assert items[3]["message"]["params"] == {"modeId": "m-1", "modeName": "Away"}
    assert items[5]["message"]["params"] == {"isDaylight": True, "sunrise": "08:40", "sunset": "17:10"}
    assert items[7]["message"]["params"] == {"alarmId": "disk", "level": "error", "source": "system", "message": "Disk almost full"}
    assert all("source" not in i for i in items)


def test_a_recipe_in_no_known_zone_is_global(house):
    house.engine.bus.emit("recipe.instance.started", instanceId="r-2", recipeId="x")  # an instance the recipe service does not know
    assert house.engine.activity.query()[0]["zoneId"] is None


def test_zone_filter_descendants_and_global_items(house, places):
    feed = house.engine.activity
    feed.record("mode", None, "mode.activated", {})
    up = feed.record("order", places.upstairs, "order.executed", {})
    bed = feed.record("order", places.bedroom, "order.executed", {})
    kit = feed.record("order", places.kitchen, "order.executed", {})
    glob = feed.query()[-1]

    def ids(**kwargs):
        return [i["id"] for i in feed.query(**kwargs)]

    assert ids() == [kit["id"], bed["id"], up["id"], glob["id"]]
    assert ids(zone_id=places.upstairs) == [bed["id"], up["id"], glob["id"]]
    assert ids(zone_id=places.upstairs, include_descendants=False) == [up["id"], glob["id"]]
    assert ids(zone_id=places.bedroom) == [bed["id"], glob["id"]]
    assert ids(zone_id=house.engine.zones.root().id) == ids()
    assert ids(zone_id="no-such-zone") == [glob["id"]]
    assert ids(limit=2) == [kit["id"], bed["id"]]
    assert ids(zone_id=places.upstairs, limit=1) == [bed["id"]]


def test_items_older_than_seven_days_are_pruned(house):
    feed = house.engine.activity
    old = feed.record("mode", None, "mode.activated", {"n": 1})
    house.clock.advance(3 * DAY_S)
    middle = feed.record("mode", None, "mode.activated", {"n": 2})
    house.clock.advance(4 * DAY_S)  # old is exactly 7 days old: still kept
    assert [i["id"] for i in feed.query()] == [middle["id"], old["id"]]
    house.clock.advance(1)
    assert [i["id"] for i in feed.query()] == [middle["id"]]  # gone even before anything new comes
    new = feed.record("mode", None, "mode.activated", {"n": 3})
    assert len(feed) == 2
    house.engine.activity.flush()
    assert stored(house) == 2
    house.clock.advance(4 * DAY_S)
    feed.record("alarm", None, "alarm.raised", {})
    house.engine.activity.flush()
    assert stored(house) == 2 and [i["message"]["params"].get("n") for i in feed.query()] == [None, 3]
    assert new["timestamp"] == T0 + 7 * DAY_S * 1000 + 1000


def test_at_most_2000_items_are_kept(house):
    feed = house.engine.activity
    for n in range(feed_module.MAX_ITEMS + 30):
        feed.record("mode", None, "mode.activated", {"n": n})
    assert len(feed) == feed_module.MAX_ITEMS
    newest = feed.query(limit=200)
    assert len(newest) == 200 and newest[0]["message"]["params"]["n"] == feed_module.MAX_ITEMS + 29
    house.engine.activity.flush()
    assert stored(house) == feed_module.MAX_ITEMS
    with orm.db_session:
        oldest = house.engine.db.select("SELECT params FROM activity_items ORDER BY seq LIMIT 1")[0]
    assert json.loads(oldest) == {"n": 30}


def test_items_are_written_in_batches_and_survive_a_restart(house, places):
    house.engine.orders.execute(places.lamp, "state", "ON", {"kind": "mode", "modeId": "m"})
    house.engine.activity.record("alarm", None, "alarm.raised", {"alarmId": "a"})
    assert stored(house) == 0  # not yet: the batch is written a moment later
    house.clock.advance(feed_module.FLUSH_DELAY_S)
    assert stored(house) == 2
    house.engine.activity.record("mode", None, "mode.activated", {})
    before = house.engine.activity.query()
    house.restart()  # stopping writes what is pending
    assert house.engine.activity.query() == before
    assert before[-1]["source"] == {"kind": "mode", "modeId": "m"}


def test_a_mode_activation_gives_its_orders_and_a_global_mode_item(house, places):
    modes = house.engine.modes
    mode = modes.create("Night")
    modes.set_impact(mode["id"], places.bedroom, [{"type": "order", "equipmentId": places.lamp, "orderAlias": "state", "value": "OFF"}])
    modes.activate(mode["id"])
    activated, order = house.engine.activity.query(limit=2)
    assert (order["category"], order["zoneId"], order["message"]["template"]) == ("order", places.bedroom, "order.executed")
    assert order["source"] == {"kind": "mode", "modeId": mode["id"], "modeName": "Night"}
    assert (activated["category"], activated["zoneId"], activated["message"]) == ("mode", None, {"template": "mode.activated", "params": {"modeId": mode["id"], "modeName": "Night"}})
    assert [i["id"] for i in house.engine.activity.query(zone_id=places.kitchen)] == [activated["id"]]
