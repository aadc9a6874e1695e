"""The energy and history pages in a real browser, on readings that went through the real pipeline
(zigbee2mqtt messages on mosquitto, the meters' arbiter, the tariff split, the history writer)."""

from __future__ import annotations

import pytest

from tests.console.homes import sign_in
from tests.harness import wait_for
from tests.zigbee import created

TARIFF = {"schedules": [{"days": list(range(7)), "slots": [{"start": "00:00", "end": "00:00", "tariff": "hp"}]}], "prices": {"hp": 0.25, "hc": 0.15}}


@pytest.fixture(scope="module")
def meters(house):
    """A main meter and a production meter, each read twice: 3.5 kWh used, 1.2 kWh produced."""
    z2m, api = house.z2m, house.home.admin
    root = z2m.root_zone_id()
    main = created(api.post("/equipments", {"name": "Compteur", "type": "main_energy_meter", "zoneId": root, "deviceIds": [z2m.devices()["cuisine_prise_four"]["id"]]}))
    solar = created(api.post("/equipments", {"name": "Panneaux", "type": "energy_production_meter", "zoneId": root, "deviceIds": [z2m.devices()["garage_prise_inconnue"]["id"]]}))
    assert api.put("/settings/energy/tariff", TARIFF).status_code == 200
    z2m.publish("cuisine_prise_four", {"energy": 1000.0, "power": 800})
    z2m.publish("garage_prise_inconnue", {"energy": 200.0, "power": 300})
    z2m.wait_value("cuisine_prise_four", "energy", 1000.0)
    z2m.wait_value("garage_prise_inconnue", "energy", 200.0)
    z2m.publish("cuisine_prise_four", {"energy": 1003.5, "power": 1200})
    z2m.publish("garage_prise_inconnue", {"energy": 201.2, "power": 450})

    def day_totals():
        totals = api.get("/energy/history", params={"period": "day"}).json()["totals"]
        return totals if totals["total_consumption"] > 0 and totals["total_production"] > 0 else None

    totals = wait_for(day_totals, timeout=15)
    return {"main": main, "solar": solar, "totals": totals}


@pytest.fixture(scope="module")
def page(browser, house, meters):
    sign_in(browser, house.server.url, "admin")
    return browser


def total(page, key: str) -> str:
    return page.text(f"[data-total='{key}'] strong")


def test_the_day_shows_the_totals_and_the_chart(page, house, meters):
    page.click("a[data-nav='/energy']")
    page.at("/energy")
    page.wait(lambda: page.first("main[data-loaded^='day:']"), 5, "day loaded")
    expected = meters["totals"]
    assert total(page, "consumption") == f"{expected['total_consumption'] / 1000:.2f} kWh"
    assert total(page, "production") == f"{expected['total_production'] / 1000:.2f} kWh"
    assert total(page, "cost") == f"{expected['cost_total']:.2f} €"
    assert expected["cost_total"] > 0
    assert page.first("#energy-chart canvas"), "uPlot drew no canvas"
    assert "Peak" in page.text("#energy-chart") and "Production" in page.text("#energy-chart")
    page.screenshot("energy")
    assert not page.errors(), page.errors()  # the chart library runs under the strict CSP


def test_week_month_and_year_hold_the_same_readings(page, house, meters):
    for period in ("week", "month", "year"):
        page.click(f"button[data-period='{period}']")
        page.wait(lambda: page.first(f"main[data-loaded^='{period}:']"), 5, f"{period} loaded")
        assert total(page, "consumption") == f"{meters['totals']['total_consumption'] / 1000:.2f} kWh", period
    page.click("button[aria-label='Previous']")
    page.wait(lambda: total(page, "consumption") == "0.00 kWh", 5, "last year is empty")


def test_the_history_chart_of_a_measure(page, house, meters):
    equipment = meters["main"]["id"]
    api = house.home.admin
    wait_for(lambda: "power" in api.get(f"/history/{equipment}").json()["aliases"], timeout=10)
    page.go(f"/history?equipment={equipment}&alias=power")
    page.at("/history")
    page.wait(lambda: page.first(f"main[data-loaded='{equipment}:power']"), 5, "history loaded")
    assert page.first("#history-chart canvas")
    assert "points" in page.text("#history-note")
    assert not page.errors(), page.errors()


def test_an_equipment_sparkline_opens_its_history(page, house, meters):
    equipment = meters["main"]["id"]
    wait_for(lambda: house.home.admin.get(f"/history/sparkline/{equipment}/power").json()["values"], timeout=10)
    page.go("/")
    page.at("/")
    link = f"article[data-equipment-id='{equipment}'] a[data-sparkline='power']"
    page.find(link)
    assert page.driver.find_element("css selector", f"{link} polyline").get_attribute("points")
    page.click(link)
    page.at("/history")
    page.wait(lambda: page.first(f"main[data-loaded='{equipment}:power']"), 5, "history of the sparkline's measure")
