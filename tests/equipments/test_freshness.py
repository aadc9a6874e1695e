"""Freshness budget of power bindings and the submeter view (spec, Equipment: freshnessBudgetMs,
powerReadingCurrent; Endpoints: ?role=submeter; Limits: 120 s .. 30 min, fallback 10 min)."""

from __future__ import annotations

import json

import pytest

from hausbox.devices.discovery import DataSpec
from hausbox.equipments.freshness import clamp_budget
from tests.inprocess import relay_order, relay_state

POWER = DataSpec("power", "number", "power", "W")
ENERGY = DataSpec("energy", "number", "energy", "kWh")


class Clock:
    def __init__(self, start: int = 1_700_000_000_000):
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("hausbox.devices.manager.now_ms", clock)
    monkeypatch.setattr("hausbox.equipments.listing.now_ms", clock)
    return clock


def _feed(house, clock, source_id, every_ms, count, value=42.0, **extra):
    for _ in range(count):
        clock.advance(every_ms)
        house.report(source_id, power=value, **extra)


def _power_binding(house, equipment_id):
    body = house.engine.equipments.to_json(house.engine.equipments.require(equipment_id))
    return next(b for b in body["dataBindings"] if b.get("category") == "power")


@pytest.fixture
def plug(house):
    device = house.device("plug", data=[POWER, relay_state("state")], orders=[relay_order("state")])
    return house.equipment("Plug", "switch", data={"power": device.data["power"], "state": device.data["state"]}, orders={"state": device.orders["state"]})


def test_unchanged_readings_still_count_as_arrivals(house, clock, plug):
    _feed(house, clock, "plug", 60_000, 6)  # the same 42 W every minute: one device.data.updated only
    assert len([e for e in house.events("device.data.updated") if e["key"] == "power"]) == 1
    assert _power_binding(house, plug)["freshnessBudgetMs"] == 150_000  # 2.5 x 60 s


def test_changing_readings_give_the_same_cadence(house, clock, plug):
    for watts in range(6):
        clock.advance(60_000)
        house.report("plug", power=float(watts))
    assert _power_binding(house, plug)["freshnessBudgetMs"] == 150_000


def test_the_median_ignores_an_odd_gap(house, clock, plug):
    _feed(house, clock, "plug", 300_000, 5)
    clock.advance(3_000_000)  # an outage
    house.report("plug", power=1.0)
    _feed(house, clock, "plug", 300_000, 3, value=2.0)
    assert _power_binding(house, plug)["freshnessBudgetMs"] == 750_000  # 2.5 x 5 min


@pytest.mark.parametrize("every_ms, budget", [(10_000, 120_000), (20 * 60_000, 1_800_000)])
def test_the_budget_is_clamped(house, clock, plug, every_ms, budget):
    _feed(house, clock, "plug", every_ms, 4)
    assert _power_binding(house, plug)["freshnessBudgetMs"] == budget


def test_absent_without_arrivals_or_polling_interval(house, clock, plug):
    assert "freshnessBudgetMs" not in _power_binding(house, plug)
    clock.advance(60_000)
    house.report("plug", power=3.0)  # one arrival: no interval yet
    assert "freshnessBudgetMs" not in _power_binding(house, plug)
    state = next(b for b in house.engine.equipments.to_json(house.engine.equipments.require(plug))["dataBindings"] if b["alias"] == "state")
    assert "freshnessBudgetMs" not in state, "only power bindings carry it"


def test_the_declared_polling_interval_is_the_fallback(house, clock, plug):
    house.fake.polling_info = lambda: {"intervalMs": 300_000, "lastPollAt": None}
    assert _power_binding(house, plug)["freshnessBudgetMs"] == 750_000
    _feed(house, clock, "plug", 30_000, 4)  # measured arrivals win over the declaration
    assert _power_binding(house, plug)["freshnessBudgetMs"] == 120_000
    house.fake.polling_info = lambda: {"nonsense": True}
    assert house.engine.freshness.budget_ms("no-such-datum") is None


def test_clamp_formula():
    assert clamp_budget(0) == 120_000 and clamp_budget(100_000) == 250_000 and clamp_budget(10**9) == 1_800_000


# ---- the submeter view -----------------------------------------------------------------------
def test_power_reading_current_uses_the_budget(house, clock, plug):
    _feed(house, clock, "plug", 60_000, 4)  # budget 150 s
    view = house.engine.equipments_view
    equipment = house.engine.equipments.require(plug)
    assert view.power_reading_current(equipment) is True
    clock.advance(149_000)
    assert view.power_reading_current(equipment) is True
    clock.advance(2_000)
    assert view.power_reading_current(equipment) is False  # older than 150 s, under the 10 min fallback
    clock.advance(-151_000)
    house.engine.devices.update_status("fake", "plug", "offline")
    assert view.power_reading_current(equipment) is False


def test_fallback_budget_is_ten_minutes(house, clock):
    device = house.device("clamp", data=[POWER])
    clamp = house.equipment("Clamp", "energy_meter", data={"power": device.data["power"]})
    clock.advance(1000)
    house.report("clamp", power=5.0)
    equipment = house.engine.equipments.require(clamp)
    clock.advance(599_000)
    assert house.engine.equipments_view.power_reading_current(equipment) is True
    clock.advance(2_000)
    assert house.engine.equipments_view.power_reading_current(equipment) is False


def test_submeter_order_groups_and_membership(house, clock):
    def metered(source_id, data=(POWER,), orders=()):
        return house.device(source_id, data=list(data), orders=list(orders))

    zeta_clamp = metered("zc")
    alpha_clamp = metered("ac")
    plug_b = metered("pb", data=[POWER, relay_state("state")], orders=[relay_order("state")])
    plug_a = metered("pa", data=[ENERGY], orders=[relay_order("state")])
    boiler = metered("wh", orders=[relay_order("state")])
    dryer = metered("dr", data=[POWER, DataSpec("cycle", "text")])
    ac = metered("th", data=[POWER, DataSpec("temperature", "number", "temperature")])
    main = metered("main")
    solar = metered("sol")
    lamp = metered("lamp", data=[relay_state("state")], orders=[relay_order("state")])
    tv = metered("tv", data=[DataSpec("power", "boolean", "power")])

    def make(name, kind, device, **extra):
        return house.equipment(name, kind, data={key: datum for key, datum in device.data.items()}, **extra)

    ids = {
        "Zeta clamp": make("Zeta clamp", "energy_meter", zeta_clamp),
        "alpha clamp": make("alpha clamp", "energy_meter", alpha_clamp),
        "Empty clamp": house.equipment("Empty clamp", "energy_meter"),  # a declared meter lists before any reading
        "Plug B": make("Plug B", "switch", plug_b, orders={"state": plug_b.orders["state"]}),
        "Plug A": make("Plug A", "switch", plug_a, orders={"state": plug_a.orders["state"]}),
        "Boiler": make("Boiler", "water_heater", boiler, orders={"state": boiler.orders["state"]}),
        "Dryer": make("Dryer", "appliance", dryer),
        "Air con": make("Air con", "thermostat", ac),
        "Main": make("Main", "main_energy_meter", main),
        "Solar": make("Solar", "solar_panel", solar),
        "Lamp": make("Lamp", "light_onoff", lamp, orders={"state": lamp.orders["state"]}),
        "TV": make("TV", "media_player", tv),
    }
    house.engine.equipments.update(ids["Dryer"], {"separateSupply": True})  # still a consumption submeter
    clock.advance(1000)
    house.report("th", power=800.0)
    house.report("pb", power=12.0)
    house.engine.devices.update_status("fake", "th", "offline")  # offline equipments stay
    expected = ["alpha clamp", "Empty clamp", "Zeta clamp", "Boiler", "Plug A", "Plug B", "Air con", "Dryer"]
    view = house.engine.equipments_view
    listed = view.list_json(None, "submeter")
    assert [e["name"] for e in listed] == expected
    assert [e["name"] for e in view.list_json("energy_meter", None)] == expected
    assert all("powerReadingCurrent" in e for e in listed)
    by_name = {e["name"]: e for e in listed}
    assert by_name["Empty clamp"]["powerReadingCurrent"] is None and by_name["Plug A"]["powerReadingCurrent"] is None
    assert by_name["Air con"]["powerReadingCurrent"] is False  # a fresh reading, but offline
    assert by_name["Plug B"]["powerReadingCurrent"] is True


def test_submeter_view_through_the_route(house, clock, plug):
    _feed(house, clock, "plug", 60_000, 3)

    status, _, body = house.api("GET", "/equipments?role=submeter")
    (entry,) = json.loads(body)
    assert status == 200 and entry["powerReadingCurrent"] is True
    power = next(b for b in entry["dataBindings"] if b["alias"] == "power")
    assert power["freshnessBudgetMs"] == 150_000
    status, _, body = house.api("GET", "/equipments?type=energy_meter")
    assert status == 200 and [e["id"] for e in json.loads(body)] == [plug]
    status, _, body = house.api("GET", "/equipments?role=owner")
    assert status == 400
