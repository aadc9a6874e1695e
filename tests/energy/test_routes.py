"""/settings/energy/tariff and /energy/status over real HTTP."""

from __future__ import annotations

import copy

import pytest

TARIFF = {
    "schedules": [
        {"days": [1, 2, 3, 4, 5], "slots": [{"start": "06:00", "end": "22:00", "tariff": "hp"}, {"start": "22:00", "end": "06:00", "tariff": "hc"}]},
        {"days": [0, 6], "slots": [{"start": "00:00", "end": "00:00", "tariff": "hc"}]},
    ],
    "prices": {"hp": 0.2516, "hc": 0.1828},
}


def status(home):
    response = home.admin.get("/energy/status")
    assert response.status_code == 200, response.text
    return response.json()


def test_unset_tariff_reads_empty_and_status_says_not_configured(home):
    assert home.admin.get("/settings/energy/tariff").json() == {"schedules": [], "prices": {"hp": 0, "hc": 0}}
    assert status(home) == {"available": False, "hasProduction": False, "sources": [], "lastDataAt": None, "tariffConfigured": False}


def test_put_stores_the_tariff_without_unknown_fields(home):
    body = copy.deepcopy(TARIFF)
    body["currency"] = "EUR"
    body["schedules"][0]["name"] = "week"
    body["schedules"][0]["slots"][0]["color"] = "red"
    body["prices"]["subscription"] = 12
    response = home.admin.put("/settings/energy/tariff", body)
    assert (response.status_code, response.json()) == (200, {"ok": True})
    assert home.admin.get("/settings/energy/tariff").json() == TARIFF
    assert status(home)["tariffConfigured"] is True
    home.server.restart()
    assert home.admin.get("/settings/energy/tariff").json() == TARIFF


def test_tariff_configured_iff_a_price_is_above_zero(home):
    for prices, configured in [({"hp": 0, "hc": 0}, False), ({"hp": 0, "hc": 0.1}, True), ({"hp": -1, "hc": 0}, False), ({"hp": 0.3, "hc": 0}, True)]:
        assert home.admin.put("/settings/energy/tariff", {"schedules": [], "prices": prices}).status_code == 200
        assert status(home)["tariffConfigured"] is configured, prices


def with_change(path: list, value):
    body = copy.deepcopy(TARIFF)
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    "path, value, error",
    [
        (["schedules", 0, "days", 1], 2.5, "schedules[0].days[1] must be an integer"),
        (["schedules", 0, "days", 1], 2.0, "schedules[0].days[1] must be an integer"),
        (["schedules", 0, "days", 1], 7, "schedules[0].days[1] must be at most 6"),
        (["schedules", 0, "days", 1], -1, "schedules[0].days[1] must be at least 0"),
        (["schedules", 0, "days", 1], "2", "schedules[0].days[1] must be an integer"),
        (["schedules", 0, "slots", 1, "start"], 22, "schedules[0].slots[1].start must be a string"),
        (["schedules", 0, "slots", 1, "end"], None, "schedules[0].slots[1].end must be a string"),
        (["schedules", 0, "slots", 1, "end"], "", "schedules[0].slots[1].end must not be empty"),
        (["schedules", 0, "slots", 1, "end"], "25:00", "schedules[0].slots[1].end is not in the expected format"),
        (["schedules", 0, "slots", 1, "tariff"], "peak", "schedules[0].slots[1].tariff must be one of hp, hc"),
        (["prices", "hp"], "0.25", "prices.hp must be a number"),
        (["prices", "hc"], True, "prices.hc must be a number"),
        (["schedules"], {}, "schedules must be an array"),
        (["schedules", 1], {"days": [0]}, "schedules[1].slots is required"),
    ],
)
def test_a_malformed_tariff_is_a_400_that_changes_nothing(home, path, value, error):
    assert home.admin.put("/settings/energy/tariff", TARIFF).status_code == 200
    response = home.admin.put("/settings/energy/tariff", with_change(path, value))
    assert (response.status_code, response.json()) == (400, {"error": error})
    assert home.admin.get("/settings/energy/tariff").json() == TARIFF


def test_the_setting_key_is_checked_the_same_way(home):
    assert home.admin.put("/settings/energy/tariff", TARIFF).status_code == 200
    stored = home.admin.get("/settings").json()["energy.tariff"]
    bad = home.admin.put("/settings", {"energy.tariff": '{"schedules": [{"days": [1.5], "slots": []}], "prices": {"hp": 1, "hc": 1}}'})
    assert bad.status_code == 400 and "days[0] must be an integer" in bad.json()["error"]
    assert home.admin.put("/settings", {"energy.tariff": "not json"}).status_code == 400
    assert home.admin.get("/settings").json()["energy.tariff"] == stored
    cleared = home.admin.put("/settings", {"energy.tariff": None})
    assert cleared.status_code == 200, cleared.text
    assert home.admin.get("/settings/energy/tariff").json() == {"schedules": [], "prices": {"hp": 0, "hc": 0}}
    assert status(home)["tariffConfigured"] is False


def test_a_standard_user_reads_but_does_not_write(home):
    _user, api = home.new_user()
    assert api.get("/settings/energy/tariff").status_code == 200
    assert api.get("/energy/status").status_code == 200
    refused = api.put("/settings/energy/tariff", TARIFF)
    assert (refused.status_code, refused.json()) == (403, {"error": "Admin access required"})


def test_history_without_a_main_meter_is_a_404_and_a_bad_query_a_400(home):
    response = home.admin.get("/energy/history", params={"period": "year", "date": "2026-01-01"})
    assert (response.status_code, response.json()) == (404, {"error": "No energy equipment configured"})
    response = home.admin.get("/energy/by-usage", params={"period": "fortnight"})
    assert (response.status_code, response.json()) == (400, {"error": "Invalid period. Use: day, week, month, year"})
    assert home.admin.get("/energy/by-usage").json()["totals"]["totalCost"] == 0


def test_status_sees_the_meters_and_the_history_answers(home):
    zone = home.admin.post("/zones", {"name": "House"}).json()
    for kind in ("main_energy_meter", "energy_production_meter"):
        assert home.admin.post("/equipments", {"name": kind, "type": kind, "zoneId": zone["id"]}).status_code == 201
    answer = status(home)
    assert answer["hasProduction"] is True
    assert (answer["available"], answer["sources"], answer["lastDataAt"]) == (True, [], None)  # no device bound, no reading yet
    _user, api = home.new_user()
    for period, buckets in (("day", (23, 24, 25)), ("week", (7,)), ("month", (28, 29, 30, 31)), ("year", (12,))):
        response = api.get("/energy/history", params={"period": period})
        assert response.status_code == 200, response.text
        assert len(response.json()["points"]) in buckets and response.json()["totals"]["cost_total"] == 0
    assert api.get("/energy/arbiter/metrics").json()["meters"] == []  # no energy binding yet
