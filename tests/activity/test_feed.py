"""The activity feed in-process, on a ManualClock: items from bus events, zone filter, retention, storage."""

from __future__ import annotations

import json
from datetime import timezone

import pytest
from pony import orm

from hausbox.activity import feed as feed_module
from hausbox.core.clock import ManualClock
from hausbox.devices.discovery import DataSpec
from hausbox.equipments import orders as orders_module
from tests.inprocess import Recorder, build_engine, light_specs

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY_S = 24 * 3600


class Rig:
    """An engine on a ManualClock with the fake integration, a small zone tree and a lamp."""

    def __init__(self, data_dir, clock: ManualClock):
        self.data_dir = data_dir
        self.clock = clock
        self.engine, self.fake = build_engine(data_dir, clock=clock)
        self.recorder = Recorder(self.engine)
        zones = self.engine.zones
        self.upstairs = zones.create("Upstairs")["id"]
        self.bedroom = zones.create("Bedroom", self.upstairs)["id"]
        self.kitchen = zones.create("Kitchen")["id"]
        data, orders = light_specs()
        device = self.fake.discover("lamp", data, orders)
        self.lamp = self.engine.equipments.create("Bedside lamp", "light_dimmable", self.bedroom, device_ids=[device.id])["id"]

    @property
    def feed(self):
        return self.engine.activity

    def stored(self) -> int:
        with orm.db_session:
            return self.engine.db.select("SELECT COUNT(*) FROM activity_items")[0]


@pytest.fixture
def rig(tmp_path):
    instance = Rig(tmp_path / "data", ManualClock(timezone.utc, T0))
    yield instance
    instance.engine.stop()


def test_orders_become_items_with_their_source(rig):
    sources = [
        {"kind": "recipe", "instanceId": "inst-1", "recipeName": "Night light"},
        {"kind": "mode", "modeId": "m-1"},
        {"kind": "manual", "userId": "u-1"},
        {"kind": "button", "equipmentId": "b-1"},
        {"kind": "external", "channel": "delivery-retry"},
        {"kind": "manual", "timedAction": True},
    ]
    for source in sources:
        rig.engine.orders.execute(rig.lamp, "state", "on", source)
    rig.engine.orders.execute(rig.lamp, "brightness", 120)  # no source given: manual
    items = rig.feed.query()
    assert [i["source"] for i in items] == [{"kind": "manual"}, *reversed(sources)]
    newest = items[0]
    assert newest["category"] == "order" and newest["zoneId"] == rig.bedroom and newest["timestamp"] == T0
    assert newest["message"] == {
        "template": "order.executed",
        "params": {"equipmentId": rig.lamp, "equipmentName": "Bedside lamp", "alias": "brightness", "value": 120, "zoneName": "Bedroom"},
    }
    assert isinstance(newest["id"], str) and len({i["id"] for i in items}) == len(items)


def test_a_recipe_source_without_its_name_is_completed_and_an_unknown_kind_is_external(rig):
    rig.feed.recipe_info = lambda instance_id: {"recipeName": f"Recipe of {instance_id}"}
    rig.engine.orders.execute(rig.lamp, "state", "ON", {"kind": "recipe", "instanceId": "i-9"})
    rig.engine.orders.execute(rig.lamp, "state", "OFF", {"kind": "telepathy"})
    second, first = rig.feed.query(limit=2)
    assert first["source"] == {"kind": "recipe", "instanceId": "i-9", "recipeName": "Recipe of i-9"}
    assert second["source"]["kind"] == "external"


def test_a_failed_order_is_an_item_too_with_its_error(rig, monkeypatch):
    monkeypatch.setattr(orders_module, "RETRY_DELAY_S", 0)
    rig.fake.fail_next = 2
    with pytest.raises(orders_module.OrderFailed):
        rig.engine.orders.execute(rig.lamp, "state", "ON", {"kind": "button"})
    orders = [i for i in rig.feed.query() if i["category"] == "order"]
    assert len(orders) == 1
    failed = orders[0]
    assert failed["message"]["template"] == "order.failed" and failed["message"]["params"]["error"] == "radio jammed"
    assert failed["source"] == {"kind": "button"} and failed["zoneId"] == rig.bedroom
    # the dispatch failure raised a system alarm: a global item
    alarm = next(i for i in rig.feed.query() if i["category"] == "alarm")
    assert alarm["zoneId"] is None and alarm["message"]["template"] == "alarm.raised"
    assert "source" not in alarm


def test_each_item_is_announced_on_the_bus(rig):
    rig.recorder.clear()
    rig.engine.orders.execute(rig.lamp, "state", "ON")
    added = rig.recorder.of("activity.added")
    assert len(added) == 1 and added[0]["item"] == rig.feed.query(limit=1)[0]
    assert set(added[0]) == {"type", "item"}


def _motion_sensor(rig, name: str, zone_id: str) -> str:
    device = rig.fake.discover(name, [DataSpec("occupancy", "boolean", "motion"), DataSpec("temperature", "number", "temperature")])
    return rig.engine.equipments.create(name, "sensor", zone_id, device_ids=[device.id])["id"]


def test_motion_is_one_item_per_zone_when_it_starts_and_when_it_ends(rig):
    first = _motion_sensor(rig, "pir-1", rig.bedroom)
    _motion_sensor(rig, "pir-2", rig.bedroom)
    rig.fake.report("pir-1", {"occupancy": False})
    rig.fake.report("pir-2", {"occupancy": False})
    assert rig.feed.query() == []
    rig.fake.report("pir-1", {"occupancy": True})
    rig.fake.report("pir-1", {"occupancy": True})  # a repeat (re-trigger) is not news
    rig.fake.report("pir-2", {"occupancy": True})  # the zone already has motion
    rig.fake.report("pir-1", {"temperature": 19.5})  # not motion
    rig.fake.report("pir-1", {"occupancy": False})  # pir-2 still sees someone
    assert [i["message"]["template"] for i in rig.feed.query()] == ["motion.detected"]
    rig.fake.report("pir-2", {"occupancy": False})
    cleared, detected = rig.feed.query()
    assert cleared["message"]["template"] == "motion.cleared" and cleared["zoneId"] == rig.bedroom
    assert cleared["category"] == detected["category"] == "motion" and "source" not in cleared
    assert detected["message"]["params"] == {"zoneId": rig.bedroom, "zoneName": "Bedroom", "equipmentId": first, "equipmentName": "pir-1"}
    # the parent zone's aggregated motion changed too, but no item repeats it there
    assert all(i["zoneId"] == rig.bedroom for i in rig.feed.query())


def test_recipe_mode_sunlight_and_alarm_events(rig):
    bus = rig.engine.bus
    rig.feed.recipe_info = lambda instance_id: {"recipeName": "Presence lights", "zoneId": rig.kitchen}
    bus.emit("recipe.instance.started", instanceId="r-1", recipeId="presence")
    bus.emit("recipe.instance.error", instanceId="r-1", recipeId="presence", error="slot missing")
    bus.emit("recipe.instance.stopped", instanceId="r-1", recipeId="presence")
    bus.emit("mode.activated", modeId="m-1", modeName="Away")
    bus.emit("mode.deactivated", modeId="m-1", modeName="Away")
    sun = {"isDaylight": False, "sunrise": "08:40", "sunset": "17:10"}
    rig.engine.aggregator.root_extras = lambda: dict(sun)
    bus.emit("system.started")  # the feed learns the current daylight: no item
    bus.emit("sunlight.changed")  # nothing moved
    sun["isDaylight"] = True
    bus.emit("sunlight.changed")
    sun["sunrise"] = "08:39"
    bus.emit("sunlight.changed")  # new times, same daylight: no item
    sun["isDaylight"] = False
    bus.emit("sunlight.changed")
    rig.engine.alarms.raise_alarm("disk", "error", "system", "Disk almost full")
    rig.engine.alarms.resolve("disk")
    items = list(reversed(rig.feed.query()))
    assert [(i["category"], i["message"]["template"]) for i in items] == [
        ("recipe", "recipe.started"), ("recipe", "recipe.error"), ("recipe", "recipe.stopped"),
        ("mode", "mode.activated"), ("mode", "mode.deactivated"),
        ("sunlight", "sunlight.sunrise"), ("sunlight", "sunlight.sunset"),
        ("alarm", "alarm.raised"), ("alarm", "alarm.resolved"),
    ]  # fmt: skip
    assert [i["zoneId"] for i in items] == [rig.kitchen] * 3 + [None] * 6
    assert items[1]["message"]["params"] == {"instanceId": "r-1", "recipeId": "presence", "recipeName": "Presence lights", "error": "slot missing"}
    assert items[3]["message"]["params"] == {"modeId": "m-1", "modeName": "Away"}
    assert items[5]["message"]["params"] == {"isDaylight": True, "sunrise": "08:40", "sunset": "17:10"}
    assert items[7]["message"]["params"] == {"alarmId": "disk", "level": "error", "source": "system", "message": "Disk almost full"}
    assert all("source" not in i for i in items)


def test_a_recipe_in_no_known_zone_is_global(rig):
    rig.engine.bus.emit("recipe.instance.started", instanceId="r-2", recipeId="x")  # an instance the recipe service does not know
    assert rig.feed.query()[0]["zoneId"] is None


def test_zone_filter_descendants_and_global_items(rig):
    feed = rig.feed
    feed.record("mode", None, "mode.activated", {})
    up = feed.record("order", rig.upstairs, "order.executed", {})
    bed = feed.record("order", rig.bedroom, "order.executed", {})
    kit = feed.record("order", rig.kitchen, "order.executed", {})
    glob = feed.query()[-1]

    def ids(**kwargs):
        return [i["id"] for i in feed.query(**kwargs)]

    assert ids() == [kit["id"], bed["id"], up["id"], glob["id"]]
    assert ids(zone_id=rig.upstairs) == [bed["id"], up["id"], glob["id"]]
    assert ids(zone_id=rig.upstairs, include_descendants=False) == [up["id"], glob["id"]]
    assert ids(zone_id=rig.bedroom) == [bed["id"], glob["id"]]
    assert ids(zone_id=rig.engine.zones.root().id) == ids()
    assert ids(zone_id="no-such-zone") == [glob["id"]]
    assert ids(limit=2) == [kit["id"], bed["id"]]
    assert ids(zone_id=rig.upstairs, limit=1) == [bed["id"]]


def test_items_older_than_seven_days_are_pruned(rig):
    feed = rig.feed
    old = feed.record("mode", None, "mode.activated", {"n": 1})
    rig.clock.advance(3 * DAY_S)
    middle = feed.record("mode", None, "mode.activated", {"n": 2})
    rig.clock.advance(4 * DAY_S)  # old is exactly 7 days old: still kept
    assert [i["id"] for i in feed.query()] == [middle["id"], old["id"]]
    rig.clock.advance(1)
    assert [i["id"] for i in feed.query()] == [middle["id"]]  # gone even before anything new comes
    new = feed.record("mode", None, "mode.activated", {"n": 3})
    assert len(feed) == 2
    rig.feed.flush()
    assert rig.stored() == 2
    rig.clock.advance(4 * DAY_S)
    feed.record("alarm", None, "alarm.raised", {})
    rig.feed.flush()
    assert rig.stored() == 2 and [i["message"]["params"].get("n") for i in feed.query()] == [None, 3]
    assert new["timestamp"] == T0 + 7 * DAY_S * 1000 + 1000


def test_at_most_2000_items_are_kept(rig):
    feed = rig.feed
    for n in range(feed_module.MAX_ITEMS + 30):
        feed.record("mode", None, "mode.activated", {"n": n})
    assert len(feed) == feed_module.MAX_ITEMS
    newest = feed.query(limit=200)
    assert len(newest) == 200 and newest[0]["message"]["params"]["n"] == feed_module.MAX_ITEMS + 29
    rig.feed.flush()
    assert rig.stored() == feed_module.MAX_ITEMS
    with orm.db_session:
        oldest = rig.engine.db.select("SELECT params FROM activity_items ORDER BY seq LIMIT 1")[0]
    assert json.loads(oldest) == {"n": 30}


def test_items_are_written_in_batches_and_survive_a_restart(rig, tmp_path):
    rig.engine.orders.execute(rig.lamp, "state", "ON", {"kind": "mode", "modeId": "m"})
    rig.feed.record("alarm", None, "alarm.raised", {"alarmId": "a"})
    assert rig.stored() == 0  # not yet: the batch is written a moment later
    rig.clock.advance(feed_module.FLUSH_DELAY_S)
    assert rig.stored() == 2
    rig.feed.record("mode", None, "mode.activated", {})
    before = rig.feed.query()
    rig.engine.stop()  # stop writes what is pending
    again, _ = build_engine(rig.data_dir, clock=rig.clock)
    try:
        assert again.activity.query() == before
        assert before[-1]["source"] == {"kind": "mode", "modeId": "m"}
    finally:
        again.stop()
    rig.engine, _ = build_engine(rig.data_dir, clock=rig.clock)  # for the fixture's teardown


def test_a_mode_activation_gives_its_orders_and_a_global_mode_item(rig):
    modes = rig.engine.modes
    mode = modes.create("Night")
    modes.set_impact(mode["id"], rig.bedroom, [{"type": "order", "equipmentId": rig.lamp, "orderAlias": "state", "value": "OFF"}])
    modes.activate(mode["id"])
    activated, order = rig.feed.query(limit=2)
    assert (order["category"], order["zoneId"], order["message"]["template"]) == ("order", rig.bedroom, "order.executed")
    assert order["source"] == {"kind": "mode", "modeId": mode["id"], "modeName": "Night"}
    assert (activated["category"], activated["zoneId"], activated["message"]) == ("mode", None, {"template": "mode.activated", "params": {"modeId": mode["id"], "modeName": "Night"}})
    assert [i["id"] for i in rig.feed.query(zone_id=rig.kitchen)] == [activated["id"]]
