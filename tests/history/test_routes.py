"""The /history routes in process: binding overrides, sparklines, aliases, series and their 400s."""

from __future__ import annotations

import json

import pytest

from hausbox.core.clock import iso_utc
from hausbox.devices.discovery import DataSpec
from tests.inprocess import local_ms

START = "2026-06-15 08:00"


def thermometer(house, name, zone=None):
    data = [DataSpec("temperature", "number", "temperature", "°C"), DataSpec("state", "enum", "generic", enum_values=["idle", "heat"]), DataSpec("setpoint", "number", "temperature", "°C")]
    return house.equipment(name, "sensor", [house.device(name, data)], zone_id=zone)


def get(house, path):
    status, _, body = house.api("GET", path)
    return status, json.loads(body) if body else None


@pytest.fixture
def home(make_house):
    house = make_house(start=START)
    house.engine.settings.set("history.minWriteInterval", 0)
    return house


def test_binding_overrides_are_listed_set_and_checked(home):
    eq = thermometer(home, "salon")
    home.start()
    status, bindings = get(home, f"/history/bindings/{eq}")
    assert status == 200
    by_alias = {b["alias"]: b for b in bindings}
    assert by_alias["temperature"]["effectiveOn"] is True and by_alias["temperature"]["historize"] is None
    assert by_alias["state"]["effectiveOn"] is False and by_alias["state"]["category"] == "generic"
    state_id = by_alias["state"]["bindingId"]
    for bad in (2, "1", True, -1, {}, [1]):
        status, _, body = home.api("PUT", f"/history/bindings/{eq}/{state_id}", {"historize": bad})
        assert status == 400 and "error" in json.loads(body), bad
    assert home.api("PUT", f"/history/bindings/{eq}/{state_id}", {})[0] == 400
    assert home.api("PUT", f"/history/bindings/{eq}/nope", {"historize": 1})[0] == 404
    assert home.api("PUT", f"/history/bindings/nope/{state_id}", {"historize": 1})[0] == 404
    status, _, body = home.api("PUT", f"/history/bindings/{eq}/{state_id}", {"historize": 1})
    assert (status, json.loads(body)) == (200, {"success": True})
    assert {b["alias"]: b for b in get(home, f"/history/bindings/{eq}")[1]}["state"]["effectiveOn"] is True
    home.report("salon", state="heat")  # the writer's decision follows the override at once
    home.advance(10)
    assert home.engine.history.store.raw_text(eq, "state") == [(local_ms(START), "heat")]
    home.restart()
    assert {b["alias"]: b for b in get(home, f"/history/bindings/{eq}")[1]}["state"]["historize"] == 1  # kept on disk
    assert home.api("PUT", f"/history/bindings/{eq}/{state_id}", {"historize": None})[0] == 200
    assert {b["alias"]: b for b in get(home, f"/history/bindings/{eq}")[1]}["state"]["effectiveOn"] is False


def test_series_sparklines_and_aliases(home):
    zone = home.zone("Salon")
    eq = thermometer(home, "salon", zone=zone)
    other = thermometer(home, "chambre", zone=zone)
    home.start()
    t0 = local_ms(START)
    for minute in range(120):
        home.report("salon", temperature=round(20 + minute * 0.2, 1), setpoint=30)  # every step past the deadband
        home.report("chambre", temperature=10.4 if minute % 2 else 10.0)  # a half-hour's mean: 10.2
        home.advance(60)
    home.advance(10)
    status, body = get(home, f"/history/{eq}/temperature?from=-3h")
    assert status == 200 and body["resolution"] == "raw" and body["dataType"] == "number" and body["category"] == "temperature"
    assert body["points"][0] == {"time": iso_utc(t0), "value": 20.0} and len(body["points"]) == 120
    assert body["points"][-1] == {"time": iso_utc(t0 + 119 * 60_000), "value": 43.8}
    hours = get(home, f"/history/{eq}/temperature?from=-3h&aggregation=1h")[1]
    assert hours["resolution"] == "1h"
    assert hours["points"] == [
        {"time": iso_utc(t0), "value": pytest.approx(20 + 0.2 * 29.5), "min": 20.0, "max": 31.8},
        {"time": iso_utc(t0 + 3_600_000), "value": pytest.approx(32 + 0.2 * 29.5), "min": 32.0, "max": 43.8},
    ]
    window = get(home, f"/history/{eq}/temperature?from={iso_utc(t0 + 60_000)}&to={iso_utc(t0 + 180_000)}&aggregation=raw")[1]
    assert [p["value"] for p in window["points"]] == [20.2, 20.4]
    assert get(home, f"/history/{eq}/temperature?from=-8d")[1]["resolution"] == "1d"
    assert get(home, f"/history/{eq}/temperature?from=-2d")[1]["resolution"] == "1h"
    spark = get(home, f"/history/sparkline/{eq}/temperature")[1]["values"]
    assert spark == [pytest.approx(20 + 0.2 * 14.5 + 6 * n) for n in range(4)]  # the half-hours 08:00 .. 09:30
    zone_spark = get(home, f"/history/sparkline/zone/{zone}/temperature")[1]["values"]
    assert zone_spark == [pytest.approx((v + 10.2) / 2) for v in spark]  # the mean of the two series; setpoint left out
    assert get(home, f"/history/{eq}")[1] == {"aliases": ["setpoint", "temperature"]}
    assert get(home, f"/history/{other}")[1] == {"aliases": ["temperature"]}


@pytest.mark.parametrize(
    "query", ["from=yesterday", "from=-3x", "from=-h", "aggregation=5m", "from=-1h&to=-2h", "to=2026-13-01T00:00:00Z"]
)
def test_a_bad_query_is_a_400(home, query):
    eq = thermometer(home, "salon")
    home.start()
    status, body = get(home, f"/history/{eq}/temperature?{query}")
    assert status == 400 and body["error"], query


def test_unknown_equipments_zones_and_aliases_are_404s(home):
    eq = thermometer(home, "salon")
    home.start()
    for path in ("/history/nope", "/history/nope/temperature", f"/history/{eq}/nope", "/history/sparkline/nope/temperature", "/history/sparkline/zone/nope/temperature", "/history/bindings/nope"):
        assert get(home, path)[0] == 404, path


def test_retention_lists_every_tier_and_job(home):
    home.start()
    home.advance(1)
    status, body = get(home, "/history/retention")
    assert status == 200 and body["setupComplete"] is True
    assert {name: tier["retentionSeconds"] for name, tier in body["buckets"].items()} == {
        "raw": 7 * 86400, "hourly": 2 * 365 * 86400, "daily": 10 * 365 * 86400, "energyHourly": 2 * 365 * 86400, "energyDaily": 10 * 365 * 86400,
    }  # fmt: skip
    assert body["tasks"]["hourly"]["status"] == "ok"  # the catch-up run at start
