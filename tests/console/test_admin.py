"""Administration in a real browser, on a fresh box: zigbee2mqtt set up by its broker URL (a real
mosquitto), an equipment created from a discovered device, users and API tokens, a backup
downloaded and restored, live logs, settings, the update page; and a standard user, who sees no
administration at all."""

from __future__ import annotations

import pytest

from tests.broker import Broker, Mqtt
from tests.console.homes import sign_in, sign_out
from tests.harness import PASSWORD, Home, Server, wait_for
from tests.zigbee import Z2m


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("data") / "hausbox").start()
    broker = Broker(tmp_path_factory.mktemp("mosquitto")).start()
    client = Mqtt(broker)
    home = Home(server)
    yield Z2m(home, broker, client)
    client.close()
    broker.stop()
    server.kill()


@pytest.fixture(scope="module")
def page(browser, box):
    sign_in(browser, box.home.server.url, "admin")
    return browser


def test_zigbee2mqtt_is_set_up_by_its_broker_url(page, box):
    page.click("a[data-nav='/admin']")
    page.at("/admin")
    form = "form[data-integration='zigbee2mqtt']"
    assert page.text(f"{form} .badge") == "not_configured"
    page.fill(f"{form} input[data-setting='zigbee2mqtt.mqtt_url']", box.broker.url)
    page.click(f"{form} button[type='submit']")
    page.wait(lambda: page.text(f"{form} .badge") == "connected", 10, "zigbee2mqtt connected")
    assert box.integration()["settingValues"]["mqtt_url"] == box.broker.url
    box.discover()  # zigbee2mqtt publishes its device list: the devices exist
    assert not page.errors(), page.errors()


def test_an_equipment_is_created_from_a_device(page, box):
    page.click("a[href='/admin/devices']")
    page.at("/admin/devices")
    spot = box.device("cuisine/spot")
    assert page.find(f"tr[data-device-id='{spot['id']}']")
    page.fill("#new-equipment-name", "Spot")
    page.find("#new-equipment-type option[value='light_onoff']").click()
    page.wait(lambda: page.first(f"#pick-{spot['id']} ~ label .muted"), 5, "the spot suggested for a light")
    page.click(f"#pick-{spot['id']}")
    page.click("#new-equipment button[type='submit']")
    created = wait_for(lambda: next((e for e in box.api.get("/equipments").json() if e["name"] == "Spot"), None))
    assert created["type"] == "light_onoff" and {b["alias"] for b in created["orderBindings"]} >= {"state"}
    page.find(f"details[data-equipment-id='{created['id']}']")
    # And it can be driven from the home page at once.
    page.click("a[data-nav='/']")
    page.at("/")
    box.client.subscribe("zigbee2mqtt/#")
    page.click(f"article[data-equipment-id='{created['id']}'] button[data-order='state'][data-value='ON']")
    assert wait_for(lambda: box.client.received("zigbee2mqtt/cuisine/spot/set")) == [{"state": "ON"}]


def test_users_and_tokens(page, box):
    page.go("/admin/users")
    page.at("/admin/users")
    page.fill("#new-user-username", "alice")
    page.fill("#new-user-name", "Alice")
    page.fill("#new-user-password", PASSWORD)
    page.click("#new-user button[type='submit']")
    page.find("tr[data-username='alice']")
    assert {u["username"]: u["role"] for u in box.api.get("/users").json()}["alice"] == "standard"
    page.fill("#token-name", "scripts")
    page.click("#tokens button[type='submit']")
    token = page.find("#new-token").text
    assert box.home.server.api(token).get("/me").json()["username"] == "admin"


def test_a_backup_is_downloaded_and_restored(page, box, tmp_path):
    page.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    page.go("/admin/backup")
    page.at("/admin/backup")
    page.click("#backup-download")
    saved = wait_for(lambda: [p for p in tmp_path.iterdir() if not p.name.endswith(".crdownload")], timeout=10)
    assert len(saved) == 1 and saved[0].name.startswith("hausbox-backup-")
    assert saved[0].read_bytes()[:2] in (b"PK", b"{\"")  # a ZIP, or JSON when there is no history
    page.find("#backup-file").send_keys(str(saved[0]))
    page.click("#backup-restore button[type='submit']")
    page.wait(lambda: _accept(page), 3, "the confirmation")
    page.wait(lambda: "Restored" in page.text("#backup-status"), 15, "restored")
    assert not page.errors(), page.errors()


def _accept(page) -> bool:
    page.driver.switch_to.alert.accept()
    return True


def test_logs_arrive_live(page, box):
    page.go("/admin/logs")
    page.at("/admin/logs")
    before = len(page.all("#logs > div"))
    assert before > 0
    assert box.api.post("/integrations/zigbee2mqtt/restart").status_code in (200, 204)
    page.wait(lambda: len(page.all("#logs > div")) > before, 5, "a new log line")


def test_a_setting_is_saved(page, box):
    page.go("/admin/settings")
    page.at("/admin/settings")
    page.fill("#setting-key", "home.latitude")
    page.fill("#setting-value", "45.76")
    page.click("form:has(#setting-key) button[type='submit']")
    page.wait(lambda: "home.latitude" in page.text("#settings-status"), 5)
    assert box.api.get("/settings").json()["home.latitude"] == 45.76
    assert page.find("input[data-key='home.latitude']").get_attribute("value") == "45.76"


def test_the_update_page_says_why_self_update_is_off(page, box):
    page.go("/admin/system")
    page.at("/admin/system")
    version = box.api.get("/system/version").json()
    assert page.text("#version-current") == version["current"]
    assert version["selfUpdate"]["reason"] in page.text("#update-reason")
    assert not page.find("#update-start").is_enabled()


def test_a_standard_user_sees_no_administration(page, box):
    sign_out(page)
    sign_in(page, box.home.server.url, "alice")
    assert page.first("a[data-nav='/']") and not page.first("a[data-nav='/admin']")
    page.go("/admin/users")
    page.at("/admin/users")
    assert "Not allowed" in page.text("main") and not page.first("#users")
    # The home with its orders is theirs.
    spot = next(e for e in box.api.get("/equipments").json() if e["name"] == "Spot")
    page.go("/")
    page.at("/")
    page.click(f"article[data-equipment-id='{spot['id']}'] button[data-order='state'][data-value='OFF']")
    assert wait_for(lambda: box.client.received("zigbee2mqtt/cuisine/spot/set")[-1:] == [{"state": "OFF"}])
    assert not page.errors(), page.errors()
