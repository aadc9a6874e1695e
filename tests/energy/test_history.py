"""GET /energy/history: calendar buckets in local time, the peak/off-peak split made at write time,
production and self-consumption, and the costs, computed here by hand.

The tariff (tests/energy/homes.py): off-peak (hc, 0.15 EUR/kWh) 22:00-06:00 every day, peak (hp,
0.25) the rest. A reading counts what the meter consumed since the previous one, in the hour (and
day) of the reading, split by the 30-minute window it starts: a reading at 05:50 is 10 minutes hc
and 20 minutes hp, so a third hc and two thirds hp.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from hausbox.history.batch import Batch
from tests.energy.homes import NO_PRICES, TARIFF, assert_matches, committed, documented, get, main_meter, ok, production_meter, read_at
from tests.inprocess import PARIS, local_ms


def energy_home(make_house, start: str, tariff=TARIFF, production: bool = True):
    house = make_house(start=start)
    house.engine.tariff.replace(tariff)
    main_meter(house)
    if production:
        production_meter(house)
    house.start()
    return house


def solar(energy: float, autoconso: float, injection: float) -> dict:
    return {"energy": energy, "autoconso": autoconso, "injection": injection}


def by_local_hour(body: dict) -> dict[str, dict]:
    """The points keyed by their local ``HH:MM`` (the repeated autumn hour gets a ``+`` mark)."""
    out: dict[str, dict] = {}
    for point in body["points"]:
        at = datetime.fromisoformat(point["time"].replace("Z", "+00:00")).astimezone(PARIS).strftime("%H:%M")
        out[at + "+" if at in out else at] = point
    return out


def test_a_day_whose_off_peak_slot_crosses_midnight(make_house):
    house = energy_home(make_house, "2026-06-15 23:30")  # a Monday night, then Tuesday 16 June
    read_at(house, "2026-06-15 23:30", linky=1000.0, solar=solar(50.0, 30.0, 20.0))  # the baselines: nothing counted
    read_at(house, "2026-06-16 00:10", linky=1000.4)  # 400 Wh hc
    read_at(house, "2026-06-16 05:50", linky=1001.0)  # 600 Wh: 10 min hc, 20 min hp -> hc 200, hp 400
    read_at(house, "2026-06-16 12:10", linky=1003.0, solar=solar(51.5, 31.2, 20.3))  # 2000 Wh hp; 1500 produced, 1200 self-consumed, 300 sent
    read_at(house, "2026-06-16 21:50", linky=1003.9, solar=solar(51.59, 31.29, 20.3))  # 900 Wh: hp 300, hc 600; 90 produced and self-consumed
    read_at(house, "2026-06-16 23:10", linky=1004.2)  # 300 Wh hc
    read_at(house, "2026-06-17 00:10", linky=1005.2)  # Wednesday: not this day
    committed(house)

    body = ok(house, "/energy/history?period=day&date=2026-06-16")
    assert (body["period"], body["resolution"], body["from"], body["to"]) == ("day", "1h", "2026-06-15T22:00:00.000Z", "2026-06-16T22:00:00.000Z")
    assert len(body["points"]) == 24
    hours = by_local_hour(body)
    assert list(hours) == [f"{h:02d}:00" for h in range(24)]
    zero = {"hp": 0.0, "hc": 0.0, "prod": 0.0, "autoconso": 0.0, "injection": 0.0, "cost_hp": 0.0, "cost_hc": 0.0, "cost_total": 0.0}
    expected = {hour: dict(zero) for hour in hours}
    expected["00:00"].update(hc=400.0, cost_hc=0.06, cost_total=0.06)
    expected["05:00"].update(hp=400.0, hc=200.0, cost_hp=0.1, cost_hc=0.03, cost_total=0.13)
    # A point's cost is its raw consumption: the self-consumed 1200 Wh are still in it.
    expected["12:00"].update(hp=2000.0, prod=1500.0, autoconso=1200.0, injection=300.0, cost_hp=0.5, cost_total=0.5)
    expected["21:00"].update(hp=300.0, hc=600.0, prod=90.0, autoconso=90.0, cost_hp=0.075, cost_hc=0.09, cost_total=0.165)
    expected["23:00"].update(hc=300.0, cost_hc=0.045, cost_total=0.045)
    for hour, point in hours.items():
        assert {k: v for k, v in point.items() if k != "time"} == pytest.approx(expected[hour]), hour
    # Totals are grid-side: 12:00 bought 2000 - 1200 = 800 hp; 21:00 bought 300 - 90 x 300/900 = 270 hp
    # and 600 - 90 x 600/900 = 540 hc. hp 400 + 800 + 270 = 1470, hc 400 + 200 + 540 + 300 = 1440.
    assert body["totals"] == pytest.approx({
        "total_consumption": 2910.0, "total_hp": 1470.0, "total_hc": 1440.0,
        "total_production": 1590.0, "total_autoconso": 1290.0, "total_injection": 300.0,
        "cost_hp": 0.3675, "cost_hc": 0.216, "cost_total": 0.5835,
    })  # fmt: skip
    assert_matches(documented(house, "/energy/history"), body)

    monday = ok(house, "/energy/history?period=day&date=2026-06-15")  # only the baselines: zero-filled
    assert len(monday["points"]) == 24 and monday["totals"]["total_consumption"] == 0.0
    wednesday = ok(house, "/energy/history?date=2026-06-17")  # period defaults to day
    assert by_local_hour(wednesday)["00:00"]["hc"] == pytest.approx(1000.0)
    week = ok(house, "/energy/history?period=week&date=2026-06-16")
    assert [p["hp"] + p["hc"] for p in week["points"]] == pytest.approx([0.0, 4200.0, 1000.0, 0.0, 0.0, 0.0, 0.0])
    assert week["points"][1]["cost_total"] == pytest.approx(0.9)  # raw: hp 2700 x 0.25 + hc 1500 x 0.15
    # Grid-side per bucket, here the whole Tuesday: its 1290 self-consumed Wh come off hp 2700 and hc 1500
    # in proportion (829.29 and 460.71), not hour by hour as in the day view; plus Wednesday's 1000 hc.
    grid_hp, grid_hc = 2700 - 1290 * 2700 / 4200, 1500 - 1290 * 1500 / 4200 + 1000
    assert (week["totals"]["total_hp"], week["totals"]["total_hc"]) == pytest.approx((round(grid_hp, 4), round(grid_hc, 4)))
    assert week["totals"]["cost_total"] == pytest.approx(round(grid_hp / 1000 * 0.25, 4) + round(grid_hc / 1000 * 0.15, 4))  # 0.4677 + 0.3059


def test_the_spring_forward_day_has_23_hours(make_house):
    house = energy_home(make_house, "2026-03-28 23:30")  # Sunday 29 March 2026: 02:00 CET is 03:00 CEST
    read_at(house, "2026-03-28 23:30", linky=500.0, solar=solar(10.0, 5.0, 5.0))
    read_at(house, "2026-03-29 01:10", linky=500.5)  # 500 Wh hc
    read_at(house, "2026-03-29 03:10", linky=501.2)  # one hour after 01:10 (02:10 does not exist): 700 Wh hc
    read_at(house, "2026-03-29 05:50", linky=501.8)  # 600 Wh: hc 200, hp 400
    read_at(house, "2026-03-29 13:10", linky=502.8, solar=solar(10.5, 5.4, 5.1))  # 1000 Wh hp, 400 of it self-consumed
    committed(house)

    body = ok(house, "/energy/history?period=day&date=2026-03-29")
    assert (body["from"], body["to"]) == ("2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z")
    assert len(body["points"]) == 23
    hours = by_local_hour(body)
    assert "02:00" not in hours and list(hours)[:3] == ["00:00", "01:00", "03:00"]
    assert hours["03:00"]["time"] == "2026-03-29T01:00:00.000Z"
    assert (hours["01:00"]["hc"], hours["03:00"]["hc"]) == pytest.approx((500.0, 700.0))
    assert (hours["05:00"]["hp"], hours["05:00"]["hc"], hours["05:00"]["cost_total"]) == pytest.approx((400.0, 200.0, 0.13))
    assert (hours["13:00"]["hp"], hours["13:00"]["autoconso"], hours["13:00"]["cost_hp"]) == pytest.approx((1000.0, 400.0, 0.25))
    # Grid-side: hp 400 + (1000 - 400) = 1000, hc 500 + 700 + 200 = 1400.
    assert body["totals"] == pytest.approx({
        "total_consumption": 2400.0, "total_hp": 1000.0, "total_hc": 1400.0,
        "total_production": 500.0, "total_autoconso": 400.0, "total_injection": 100.0,
        "cost_hp": 0.25, "cost_hc": 0.21, "cost_total": 0.46,
    })  # fmt: skip


def test_the_fall_back_day_has_25_hours(make_house):
    house = energy_home(make_house, "2026-10-24 23:30")  # Sunday 25 October 2026: 03:00 CEST is 02:00 CET
    read_at(house, "2026-10-24 23:30", linky=800.0, solar=solar(20.0, 10.0, 10.0))
    read_at(house, datetime(2026, 10, 25, 2, 10, tzinfo=PARIS, fold=0), linky=800.3)  # the first 02:10 (CEST): 300 Wh hc
    read_at(house, datetime(2026, 10, 25, 2, 10, tzinfo=PARIS, fold=1), linky=800.8)  # the second (CET): 500 Wh hc
    read_at(house, "2026-10-25 12:10", linky=802.0, solar=solar(20.5, 10.3, 10.2))  # 1200 Wh hp, 300 self-consumed
    read_at(house, "2026-10-25 21:50", linky=802.9)  # 900 Wh: hp 300, hc 600
    committed(house)

    body = ok(house, "/energy/history?period=day&date=2026-10-25")
    assert (body["from"], body["to"]) == ("2026-10-24T22:00:00.000Z", "2026-10-25T23:00:00.000Z")
    assert len(body["points"]) == 25
    hours = by_local_hour(body)
    assert list(hours)[:4] == ["00:00", "01:00", "02:00", "02:00+"]
    assert (hours["02:00"]["time"], hours["02:00+"]["time"]) == ("2026-10-25T00:00:00.000Z", "2026-10-25T01:00:00.000Z")
    assert (hours["02:00"]["hc"], hours["02:00+"]["hc"]) == pytest.approx((300.0, 500.0))
    assert (hours["02:00"]["cost_hc"], hours["02:00+"]["cost_hc"]) == pytest.approx((0.045, 0.075))
    assert (hours["12:00"]["cost_hp"], hours["21:00"]["cost_total"]) == pytest.approx((0.3, 0.165))
    # Grid-side: hp (1200 - 300) + 300 = 1200, hc 300 + 500 + 600 = 1400.
    assert body["totals"] == pytest.approx({
        "total_consumption": 2600.0, "total_hp": 1200.0, "total_hc": 1400.0,
        "total_production": 500.0, "total_autoconso": 300.0, "total_injection": 200.0,
        "cost_hp": 0.3, "cost_hc": 0.21, "cost_total": 0.51,
    })  # fmt: skip
    month = ok(house, "/energy/history?period=month&date=2026-10-25")
    assert len(month["points"]) == 31 and month["points"][24]["hp"] + month["points"][24]["hc"] == pytest.approx(2900.0)


def test_weeks_start_on_monday_months_have_their_days_and_a_year_twelve_months(make_house):
    house = energy_home(make_house, "2026-02-27 10:00", production=False)
    read_at(house, "2026-02-27 10:00", linky=100.0)
    read_at(house, "2026-02-28 12:10", linky=101.0)  # Saturday 28 February: 1000 Wh hp
    read_at(house, "2026-03-02 12:10", linky=103.0)  # Monday 2 March: 2000 Wh hp
    read_at(house, "2026-03-08 23:10", linky=103.5)  # Sunday 8 March: 500 Wh hc
    committed(house)

    def totals_of(query):
        body = ok(house, "/energy/history?" + query)
        return body, [round(p["hp"] + p["hc"], 4) for p in body["points"]]

    for day in ("2026-03-02", "2026-03-04", "2026-03-08"):  # Monday, Wednesday, Sunday: the same week
        week, values = totals_of(f"period=week&date={day}")
        assert (week["resolution"], week["from"], week["to"]) == ("1d", "2026-03-01T23:00:00.000Z", "2026-03-08T23:00:00.000Z")
        assert values == [2000.0, 0, 0, 0, 0, 0, 500.0]
    _, values = totals_of("period=week&date=2026-03-01")  # a Sunday: the week from Monday 23 February
    assert values == [0, 0, 0, 0, 0, 1000.0, 0]
    week, _ = totals_of("period=week&date=2026-03-29")  # across spring forward: 7 days, 167 hours
    assert (week["from"], week["to"]) == ("2026-03-22T23:00:00.000Z", "2026-03-29T22:00:00.000Z") and len(week["points"]) == 7

    february, values = totals_of("period=month&date=2026-02-14")
    assert (february["resolution"], february["from"], february["to"]) == ("1d", "2026-01-31T23:00:00.000Z", "2026-02-28T23:00:00.000Z")
    assert len(values) == 28 and values[27] == 1000.0 and sum(values) == 1000.0
    march, values = totals_of("period=month&date=2026-03-31")
    assert len(values) == 31 and (values[1], values[7], sum(values)) == (2000.0, 500.0, 2500.0)
    assert march["points"][7]["time"] == "2026-03-07T23:00:00.000Z"
    assert len(totals_of("period=month&date=2026-04-01")[1]) == 30
    assert len(totals_of("period=month&date=2024-02-10")[1]) == 29  # a leap year, no data: zero-filled

    year, values = totals_of("period=year&date=2026-07-01")
    assert (year["resolution"], year["from"], year["to"]) == ("1mo", "2025-12-31T23:00:00.000Z", "2026-12-31T23:00:00.000Z")
    assert values == [0, 1000.0, 2500.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert year["points"][3]["time"] == "2026-03-31T22:00:00.000Z"  # April starts in summer time
    assert year["totals"]["cost_total"] == pytest.approx(0.75 + 0.075)


def test_the_default_date_is_today_in_local_time(make_house):
    house = energy_home(make_house, "2026-03-01 12:00", production=False)
    read_at(house, "2026-03-01 12:00", linky=10.0)
    read_at(house, "2026-03-02 00:30", linky=10.2)  # 23:30 UTC on the 1st, but the 2nd at home
    committed(house)
    body = ok(house, "/energy/history")
    assert (body["period"], body["from"]) == ("day", "2026-03-01T23:00:00.000Z")
    assert body["points"][0]["hc"] == pytest.approx(200.0)


def test_no_tariff_means_every_cost_is_zero(make_house):
    house = energy_home(make_house, "2026-06-16 10:00", tariff=NO_PRICES, production=False)
    read_at(house, "2026-06-16 10:00", linky=1.0)
    read_at(house, "2026-06-16 12:10", linky=3.0)
    committed(house)
    body = ok(house, "/energy/history?date=2026-06-16")
    assert body["totals"]["total_hp"] == pytest.approx(2000.0)
    costs = [p[k] for p in body["points"] + [body["totals"]] for k in ("cost_hp", "cost_hc", "cost_total")]
    assert set(costs) == {0.0}


@pytest.mark.parametrize(
    "query, error",
    [
        ("period=hour", "Invalid period. Use: day, week, month, year"),
        ("period=DAY", "Invalid period. Use: day, week, month, year"),
        ("date=2026-13-01", "date must be a calendar date YYYY-MM-DD"),
        ("date=2026-02-30", "date must be a calendar date YYYY-MM-DD"),
        ("date=20260301", "date must be a calendar date YYYY-MM-DD"),
        ("date=2026-03-01T00:00", "date must be a calendar date YYYY-MM-DD"),
        ("date=%EF%BC%92026-03-01", "date must be a calendar date YYYY-MM-DD"),  # a fullwidth digit
        ("period=year&date=9999-12-31", "date must be between 1970 and 9998"),
        ("date=0001-01-01", "date must be between 1970 and 9998"),
    ],
)
def test_a_bad_period_or_date_is_a_400(make_house, query, error):
    house = energy_home(make_house, "2026-06-16 10:00", production=False)
    for route in ("/energy/history", "/energy/by-usage"):
        assert get(house, f"{route}?{query}") == (400, {"error": error})


def test_no_main_meter_is_a_404(make_house):
    house = make_house(start="2026-06-16 10:00")
    production_meter(house)
    house.start()
    assert get(house, "/energy/history") == (404, {"error": "No energy equipment configured"})
    assert get(house, "/energy/history?period=year&date=2026-01-01")[0] == 404
    assert get(house, "/energy/history?period=minute")[0] == 400  # the query is checked first


def test_a_year_over_two_years_of_sums_adds_up_each_month(make_house):
    """Its time is the history benchmark's (tools/benchlib/history.py), not a test's."""
    house = energy_home(make_house, "2026-12-31 12:00")
    store, tz = house.engine.history.store, PARIS
    equipments = {e.type: e.id for e in house.engine.equipments.all()}
    keys = [(equipments["main_energy_meter"], "energy")] + [(equipments["energy_production_meter"], a) for a in ("energy", "autoconso", "injection")]
    keys += [(f"other-{n}", "energy") for n in range(46)]  # 50 series in all
    batch = Batch()
    start = local_ms("2025-01-01 00:00")
    for hour in range(0, 2 * 365 * 24):
        at = start + hour * 3_600_000
        day = local_ms(datetime.fromtimestamp(at / 1000, tz).replace(hour=0, minute=0, second=0))
        for key in keys:
            batch.add_energy(key, at, day, 100.0, 50.0)
    store.write(batch)

    body = ok(house, "/energy/history?period=year&date=2026-06-01")
    assert len(body["points"]) == 12
    assert body["points"][0]["hp"] == pytest.approx(31 * 24 * 100.0)
    assert body["points"][2]["hp"] == pytest.approx((31 * 24 - 1) * 100.0)  # March loses an hour
