"""The home page in a real browser, against a real server, mosquitto and the zigbee2mqtt simulation:
orders clicked (or keyed) on the page reach <name>/set on the broker; a device's message shows on
the page within a second; zone orders, modes, the timed action's countdown and the activity feed."""

from __future__ import annotations

import time

import pytest
from selenium.webdriver.common.keys import Keys

from tests.console.homes import sign_in
from tests.harness import wait_for
from tests.zigbee import created, wait_sets



@pytest.fixture(scope="module")
def page(browser, house):
    sign_in(browser, house.server.url, "admin")
    return browser


def card(house, key: str) -> str:
    return f"article[data-equipment-id='{house.equipments[key]['id']}']"


def test_the_zone_tree_shows_each_room_with_its_equipments(page, house):
    for name, zone_id in house.zones.items():
        section = page.find(f"section[data-zone-id='{zone_id}']")
        assert name in section.text
    assert "Spot cuisine" in page.text(f"section[data-zone-id='{house.zones['Cuisine']}']")
    assert "Lampe chevet" in page.text(f"section[data-zone-id='{house.zones['Chambre']}']")
    assert not page.errors(), page.errors()


def test_a_light_turned_on_from_the_page_reaches_zigbee2mqtt(page, house):
    page.click(f"{card(house, 'spot')} button[data-order='state'][data-value='ON']")
    assert wait_sets(house.z2m, "cuisine/spot", 1) == [{"state": "ON"}]
    # The bulb reports its new state: the page shows it, the On button pressed.
    house.z2m.publish("cuisine/spot", {"state": "ON"})
    on = f"{card(house, 'spot')} button[data-order='state'][data-value='ON']"
    page.wait(lambda: page.find(on).get_attribute("aria-pressed") == "true", 2, "On pressed")
    assert page.text(f"{card(house, 'spot')} dd[data-alias='state']") == "ON"


def test_a_device_message_shows_on_the_page_within_a_second(page, house):
    value = page.find(f"{card(house, 'weather')} dd[data-alias='temperature']")
    sent = time.monotonic()
    house.z2m.publish("salon_meteo", {"temperature": 23.4, "humidity": 41})
    page.wait(lambda: value.text == "23.4 °C", 1.0, "the new temperature on the page")
    shown_after = time.monotonic() - sent
    assert shown_after < 1.0, shown_after
    # And the room's aggregate follows.
    chip = f"[data-zone-aggregates='{house.zones['Salon']}'] [data-key='temperature']"
    page.wait(lambda: page.text(chip) == "23.4 °C", 1.0, "zone temperature")


def test_the_brightness_slider_works_from_the_keyboard(page, house):
    slider = page.find(f"{card(house, 'lamp')} input[data-order='brightness']")
    before = int(float(slider.get_attribute("value")))
    slider.send_keys(Keys.ARROW_RIGHT)
    assert wait_sets(house.z2m, "chambre_lampe_chevet", 1) == [{"brightness": before + 1}]


def test_a_zone_order_and_a_shutter_order(page, house):
    page.click(f"section[data-zone-id='{house.zones['Cuisine']}'] > .zone-head button[data-zone-order='allLightsOff']")
    assert wait_sets(house.z2m, "cuisine/spot", 2)[1] == {"state": "OFF"}
    page.click(f"{card(house, 'blind')} button[data-order='state'][data-value='CLOSE']")
    assert wait_sets(house.z2m, "chambre_store", 1) == [{"state": "CLOSE"}]


def test_the_timed_action_sends_its_order_and_counts_down(page, house):
    page.click(f"{card(house, 'spot')} button[data-timed='arm']")
    assert wait_sets(house.z2m, "cuisine/spot", 3)[2] == {"state": "ON"}
    countdown = f"{card(house, 'spot')} [data-countdown]"
    first = page.wait(lambda: page.text(countdown), 2, "countdown")
    assert first.startswith("Back to Off in 9:5") or first == "Back to Off in 10:00", first
    page.wait(lambda: page.text(countdown) != first, 2.5, "the countdown ticking")
    armed = house.home.admin.get(f"/equipments/{house.equipments['spot']['id']}").json().get("timedAction")
    assert armed and armed["revertValue"] == "OFF"
    page.click(f"{card(house, 'spot')} .timed button.link")  # revert now
    assert wait_sets(house.z2m, "cuisine/spot", 4)[3] == {"state": "OFF"}
    page.wait(lambda: not page.first(countdown), 2, "countdown gone")


def test_a_mode_is_activated_from_the_page(page, house):
    mode = house.home.admin.get("/modes").json()[0]
    button = f"[data-mode-id='{mode['id']}'] button"
    assert page.text(button) == "Activate"
    page.click(button)
    page.wait(lambda: page.text(button) == "Deactivate", 2, "mode shown active")
    assert house.home.admin.get(f"/modes/{mode['id']}").json()["state"] == "active"
    page.click(button)
    page.wait(lambda: page.text(button) == "Activate", 2, "mode shown inactive")


def test_the_activity_feed_is_live(page, house):
    house.home.admin.post(f"/equipments/{house.equipments['ceiling']['id']}/orders/state", {"value": "ON"})
    page.wait(lambda: "Plafonnier: state → ON" in page.text("#activity li"), 2, "activity item at the top")


def test_screenshot_of_the_home(page, house):
    house.z2m.publish("salon_plafonnier", {"state": "ON", "brightness": 180})
    house.z2m.publish("chambre_lampe_chevet", {"state": "ON", "brightness": 120})
    page.wait(lambda: page.text(f"{card(house, 'ceiling')} dd[data-alias='state']") == "ON", 2)
    page.driver.execute_script("window.scrollTo(0, 0)")
    path = page.screenshot("home")
    assert path.stat().st_size > 10_000
    assert not page.errors(), page.errors()


def test_on_a_phone_screen_nothing_overflows_sideways(page, house):
    page.driver.set_window_size(390, 844)
    try:
        page.driver.refresh()
        page.at("/")
        width = page.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        # Still usable: the spot's On button is there and reachable.
        assert page.find(f"{card(house, 'spot')} button[data-order='state'][data-value='ON']").is_displayed()
    finally:
        page.driver.set_window_size(1280, 900)


@pytest.fixture(scope="module")
def simulated(house, page):
    """The simulator's VMC and thermostat (devices that answer their orders), on the same home."""
    api = house.home.admin
    values = {"integration.simulator.enabled": True, "integration.simulator.rooms": 1, "integration.simulator.message_rate": 0}
    assert api.put("/settings", values).status_code == 200
    devices = wait_for(lambda: (lambda d: d if {"sim-vmc", "sim-thermostat"} <= set(d) else None)(
        {d["sourceDeviceId"]: d["id"] for d in api.get("/devices").json() if d["integrationId"] == "simulator"}), timeout=10)
    made = {}
    for key, name, kind, source in (("vmc", "VMC", "vmc", "sim-vmc"), ("thermostat", "Thermostat", "thermostat", "sim-thermostat")):
        made[key] = created(api.post("/equipments", {"name": name, "type": kind, "zoneId": house.zones["Cuisine"], "deviceIds": [devices[source]]}))
    page.driver.refresh()
    page.at("/")
    return made


def test_the_vmc_speed_and_the_thermostat_setpoint(page, house, simulated):
    api = house.home.admin
    vmc = f"article[data-equipment-id='{simulated['vmc']['id']}']"
    page.click(f"{vmc} button[data-order='speed'][data-value='v2']")
    wait_for(lambda: (lambda d: d.get("high") == "ON" and d.get("low") == "OFF")(api.get(f"/equipments/{simulated['vmc']['id']}").json()["data"]), timeout=5)
    page.wait(lambda: page.find(f"{vmc} button[data-value='v2']").get_attribute("aria-pressed") == "true", 2, "speed 2 shown")
    thermostat = simulated["thermostat"]["id"]
    before = api.get(f"/equipments/{thermostat}").json()["data"]["setpoint"]
    page.find(f"article[data-equipment-id='{thermostat}'] input[data-order='setpoint']").send_keys(Keys.ARROW_RIGHT)
    wait_for(lambda: api.get(f"/equipments/{thermostat}").json()["data"]["setpoint"] == before + 0.5, timeout=5)


def test_keyboard_navigation_reaches_a_page_and_lands_on_its_content(page, house):
    page.driver.execute_script("window.scrollTo(0, 0)")
    link = page.find("a[data-nav='/energy']")
    link.send_keys(Keys.ENTER)
    page.at("/energy")
    assert page.driver.execute_script("return document.activeElement.id") == "main"
    page.find("a[data-nav='/']").send_keys(Keys.ENTER)
    page.at("/")
