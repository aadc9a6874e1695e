"""GET /energy/by-usage, /energy/arbiter/metrics and /energy/status, with meters reporting through
the real pipeline; costs computed here by hand (tariff of tests/energy/homes.py: hp 0.25, hc 0.15)."""

from __future__ import annotations

import pytest

from hausbox.devices.discovery import DataSpec
from tests.energy.homes import NO_PRICES, TARIFF, assert_matches, committed, documented, get, main_meter, meter, ok, production_meter, read_at

DAY = "/energy/by-usage?period=day&date=2026-06-16"


def usage_home(make_house, with_main: bool = True, separate: bool = True, tariff=TARIFF):
    """Clamp (an energy_meter), Plug (a switch measuring energy), Garage (an energy_meter on another
    supply) and the main meter; readings at 00:10 (hc) and 12:10 (hp) on Tuesday 16 June 2026."""
    house = make_house(start="2026-06-15 23:30")
    house.engine.tariff.replace(tariff)
    ids = {"clamp": meter(house, "Clamp", "energy_meter"), "plug": meter(house, "Plug", "switch"), "garage": meter(house, "Garage", "energy_meter")}
    if with_main:
        ids["main"] = main_meter(house)
    if separate:
        house.engine.equipments.update(ids["garage"], {"separateSupply": True})
    house.start()
    everyone = {"linky": 100.0, "Clamp": 10.0, "Plug": 20.0, "Garage": 30.0}
    read_at(house, "2026-06-15 23:30", **everyone)  # baselines
    # 00:10: main 1000 hc; the submeters 400 + 800 = 1200 exceed it (meters disagree): other is 0, not -200.
    read_at(house, "2026-06-16 00:10", linky=101.0, Clamp=10.4, Plug=20.8)
    # 12:10: main 3000 hp; submeters 1000 + 500: other 1500; the garage's 700 is on its own supply.
    read_at(house, "2026-06-16 12:10", linky=104.0, Clamp=11.4, Plug=21.3, Garage=30.7)
    committed(house)
    return house, ids


def values(series: dict) -> list[float]:
    return [round(p["wh"], 4) for p in series["points"]]


def test_submeters_other_and_costs_at_the_periods_rate(make_house):
    house, ids = usage_home(make_house)
    body = ok(house, DAY)
    assert (body["period"], body["resolution"], body["from"], body["to"]) == ("day", "1h", "2026-06-15T22:00:00.000Z", "2026-06-16T22:00:00.000Z")
    # The ?role=submeter order: clamp meters, then measuring relays; the separate-supply garage apart.
    assert [(s["id"], s["name"], s["type"]) for s in body["submeters"]] == [(ids["clamp"], "Clamp", "energy_meter"), (ids["plug"], "Plug", "switch")]
    clamp, plug = body["submeters"]
    assert len(values(clamp)) == 24 and values(clamp)[0] == 400.0 and values(clamp)[12] == 1000.0 and sum(values(clamp)) == 1400.0
    assert values(plug)[0] == 800.0 and values(plug)[12] == 500.0
    assert values(body["other"])[0] == 0.0 and values(body["other"])[12] == 1500.0 and sum(values(body["other"])) == 1500.0
    # Rate: (3000 Wh x 0.25 + 1000 Wh x 0.15) / 4000 Wh = 0.225 EUR/kWh.
    assert (clamp["total"], clamp["cost"]) == pytest.approx((1400.0, 0.315))
    assert (plug["total"], plug["cost"]) == pytest.approx((1300.0, 0.2925))
    assert (body["other"]["total"], body["other"]["cost"]) == pytest.approx((1500.0, 0.3375))
    assert body["totals"] == {  # every value is rounded (Wh and euros to 4 decimals): exact
        "byEquipment": {ids["clamp"]: 1400.0, ids["plug"]: 1300.0}, "other": 1500.0, "total": 4000.0,
        "costByEquipment": {ids["clamp"]: 0.315, ids["plug"]: 0.2925}, "otherCost": 0.3375, "totalCost": 0.945, "rate": 0.225,
    }  # fmt: skip
    [garage] = body["separateSupply"]
    assert (garage["id"], garage["total"], garage["cost"], values(garage)[12]) == (ids["garage"], 700.0, 0.0, 700.0)
    assert_matches(documented(house, "/energy/by-usage"), body)

    week = ok(house, "/energy/by-usage?period=week&date=2026-06-17")
    assert len(week["other"]["points"]) == 7
    # A day bucket: other = 4000 - 2700 = 1300 (the 00:10 excess now offsets the 12:10 residual).
    assert values(week["other"]) == [0.0, 1300.0, 0, 0, 0, 0, 0] and week["totals"]["otherCost"] == pytest.approx(0.2925)


def test_without_a_separate_supply_the_key_is_absent(make_house):
    house, ids = usage_home(make_house, separate=False)
    body = ok(house, DAY)
    assert "separateSupply" not in body
    assert [s["name"] for s in body["submeters"]] == ["Clamp", "Garage", "Plug"]
    assert values(body["other"])[12] == 800.0  # 3000 - 1000 - 700 - 500
    assert body["totals"]["costByEquipment"][ids["garage"]] == pytest.approx(0.1575)  # 700 Wh at 0.225


def test_self_consumption_weighs_the_rate_with_what_the_grid_sold(make_house):
    house, ids = usage_home(make_house, separate=False)
    production_meter(house)
    read_at(house, "2026-06-16 13:00", solar={"energy": 1.0, "autoconso": 1.0, "injection": 0.0})
    read_at(house, "2026-06-16 13:10", linky=106.0, solar={"energy": 3.0, "autoconso": 3.0, "injection": 0.0})  # 2000 hp, all self-consumed
    committed(house)
    body = ok(house, DAY)
    # Grid-side: hp 3000 + (2000 - 2000) = 3000, hc 1000: the rate stays 0.225; the consumption is 6000 Wh raw.
    assert body["totals"]["rate"] == pytest.approx(0.225) and body["totals"]["total"] == 6000.0
    assert values(body["other"])[13] == 2000.0 and body["totals"]["otherCost"] == pytest.approx((800 + 2000) / 1000 * 0.225)


def test_no_main_meter_or_no_tariff_makes_every_cost_zero(make_house):
    for house in (usage_home(make_house, with_main=False)[0], usage_home(make_house, tariff=NO_PRICES)[0]):
        body = ok(house, DAY)
        costs = [s["cost"] for s in body["submeters"]] + [body["other"]["cost"], body["totals"]["otherCost"], body["totals"]["totalCost"], body["totals"]["rate"]]
        assert set(costs) == {0.0} and set(body["totals"]["costByEquipment"].values()) == {0.0}
        assert sum(values(body["submeters"][0])) == 1400.0
    body = ok(house, DAY)
    assert body["totals"]["total"] == 4000.0  # with a main meter but no prices


def test_without_a_main_meter_the_total_is_the_submeters_and_other_is_zero(make_house):
    house, _ids = usage_home(make_house, with_main=False)
    body = ok(house, DAY)
    assert body["totals"]["total"] == 2700.0 and set(values(body["other"])) == {0.0}


def test_no_consumption_makes_every_cost_zero(make_house):
    house, _ids = usage_home(make_house)
    body = ok(house, "/energy/by-usage?period=day&date=2026-06-14")
    assert body["totals"]["totalCost"] == 0.0 and body["totals"]["rate"] == 0.0 and body["totals"]["total"] == 0.0


def test_arbiter_metrics_count_a_reset_as_a_reset_not_as_consumption(make_house):
    house = make_house(start="2026-06-16 10:00")
    house.engine.tariff.replace(TARIFF)
    main = main_meter(house)
    production = production_meter(house)
    interval = house.equipment("Heater", "heater", [house.device("heater", [DataSpec("energy", "number", "energy", "Wh")])])
    garage = meter(house, "Garage", "energy_meter")
    house.engine.equipments.update(garage, {"separateSupply": True})
    disabled = meter(house, "Old", "energy_meter")
    house.engine.equipments.update(disabled, {"enabled": False})
    house.start()
    read_at(house, "2026-06-16 10:00", linky=100.0, heater=200)
    read_at(house, "2026-06-16 11:10", linky=101.0, heater=-3)  # 1000 Wh; a negative interval: refused
    read_at(house, "2026-06-16 12:10", linky=5.0, heater=150)  # the counter was replaced: a new baseline, nothing counted
    read_at(house, "2026-06-16 13:10", linky=5.5)  # 500 Wh from the new baseline
    committed(house)

    metrics = ok(house, "/energy/arbiter/metrics")
    assert_matches(documented(house, "/energy/arbiter/metrics"), metrics)
    by_key = {(m["equipmentId"], m["alias"]): m for m in metrics["meters"]}
    assert set(by_key) == {(main, "energy"), (production, "energy"), (production, "autoconso"), (production, "injection"), (interval, "energy"), (garage, "energy")}
    linky = by_key[(main, "energy")]
    assert {k: linky[k] for k in ("name", "type", "role", "separateSupply", "kind", "readings", "countedWh", "resets", "refused")} == {
        "name": "linky", "type": "main_energy_meter", "role": "main", "separateSupply": False, "kind": "cumulative",
        "readings": 4, "countedWh": 1500.0, "resets": 1, "refused": 0,
    }  # fmt: skip
    [bound] = [b["deviceDataId"] for b in house.equipment_json(main)["dataBindings"] if b["alias"] == "energy"]
    assert linky["baseline"] == {"reading": 5.5, "at": "2026-06-16T11:10:00.000Z", "deviceDataId": bound}
    assert (linky["lastResetAt"], linky["lastReadingAt"]) == ("2026-06-16T10:10:00.000Z", "2026-06-16T11:10:00.000Z")
    heater = by_key[(interval, "energy")]
    assert (heater["role"], heater["kind"], heater["readings"], heater["countedWh"], heater["refused"], heater["baseline"]) == ("submeter", "interval", 3, 350.0, 1, None)
    assert by_key[(production, "autoconso")]["role"] == "production" and by_key[(production, "autoconso")]["readings"] == 0
    assert by_key[(garage, "energy")]["separateSupply"] is True
    assert metrics["totals"] == {"readings": 7, "countedWh": 1850.0, "resets": 1, "transientDrops": 0, "replacements": 0, "refused": 1}
    assert metrics["since"] == "2026-06-16T08:00:00.000Z"
    # What was counted is what the history shows: the reset added nothing.
    history = ok(house, "/energy/history?date=2026-06-16")
    assert history["totals"]["total_hp"] == pytest.approx(1500.0)
    assert [round(p["hp"]) for p in history["points"]][11:14] == [1000, 0, 500]


def test_status_names_the_main_meters_integration_and_its_last_reading(make_house):
    house = make_house(start="2026-06-16 10:00")
    assert ok(house, "/energy/status") == {"available": False, "hasProduction": False, "sources": [], "lastDataAt": None, "tariffConfigured": False}
    main_meter(house)
    house.start()
    assert ok(house, "/energy/status")["available"] is True and ok(house, "/energy/status")["lastDataAt"] is None
    read_at(house, "2026-06-16 10:05", linky=7.0)
    committed(house)
    status = ok(house, "/energy/status")
    assert (status["sources"], status["lastDataAt"]) == (["fake"], "2026-06-16T08:05:00.000Z")
    assert_matches(documented(house, "/energy/status"), status)
    house.restart()  # the arbiter's counts start again; the stored baseline still says when
    assert ok(house, "/energy/status")["lastDataAt"] == "2026-06-16T08:05:00.000Z"


def test_the_energy_reads_are_documented_with_their_responses_and_queries(make_house):
    house = make_house()
    paths = ok(house, "/openapi.json")["paths"]
    for path in ("/energy/status", "/energy/history", "/energy/by-usage", "/energy/arbiter/metrics"):
        success = paths["/api/v1" + path]["get"]["responses"]["200"]
        assert success["description"] != "Success" and success["content"]["application/json"]["schema"]["properties"], path
    for path in ("/energy/history", "/energy/by-usage"):
        assert [(p["name"], p["in"]) for p in paths["/api/v1" + path]["get"]["parameters"]] == [("period", "query"), ("date", "query")]
    assert "resets" in str(paths["/api/v1/energy/arbiter/metrics"]["get"]["responses"]["200"])

