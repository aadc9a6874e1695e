"""In a real browser: the first-run wizard to a first administrator (language and home location
saved), sign-in and sign-out, a wrong password, the MFA code step, and the access token refreshed
without the user noticing."""

from __future__ import annotations

import time

import pyotp
import pytest

from tests.harness import PASSWORD, wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tests.harness import Server

    # No TZ: the home location chosen in the wizard decides the time zone, as on a fresh box.
    instance = Server(tmp_path_factory.mktemp("data") / "hausbox", env={"TZ": ""}).start()
    yield instance
    instance.kill()


def sign_in(browser, username: str, password: str = PASSWORD) -> None:
    browser.fill("#signin-username", username)
    browser.fill("#signin-password", password)
    browser.click("#signin-submit")


def test_the_wizard_creates_the_first_admin_and_saves_the_location(browser, server):
    browser.open(server.url, "/")
    browser.find("#setup-form")
    assert browser.driver.current_url.endswith("/setup")
    browser.driver.find_element("css selector", "#setup-language option[value=fr]").click()
    assert browser.wait(lambda: "Bienvenue" in browser.text("h1"))
    browser.fill("#setup-username", "owner")
    browser.fill("#setup-displayname", "The Owner")
    browser.fill("#setup-password", PASSWORD)
    browser.fill("#setup-password2", PASSWORD + "x")
    browser.click("#setup-submit")
    assert browser.wait(lambda: "diffèrent" in browser.text(".error"))
    browser.fill("#setup-password2", PASSWORD)
    browser.click("#setup-submit")
    browser.fill("#setup-latitude", "48.8566")
    browser.fill("#setup-longitude", "2.3522")
    browser.click("#setup-finish")
    browser.at("/")
    assert browser.text("#whoami") == "The Owner"
    # What the wizard did, as the API tells it.
    api = server.api(browser.session()["accessToken"])
    me = api.get("/me").json()
    assert (me["username"], me["role"], me["preferences"].get("language")) == ("owner", "admin", "fr")
    settings = api.get("/settings").json()
    assert (settings["home.latitude"], settings["home.longitude"]) == (48.8566, 2.3522)
    assert server.api().get("/auth/status").json() == {"setupRequired": False}
    assert not browser.errors(), browser.errors()  # no script error, no CSP violation
    # The zone is chosen at start-up: the box's next start lives in Paris, and the page's live
    # connection comes back by itself.
    assert browser.wait(lambda: live(browser) == "online")
    server.restart()
    assert api.get("/system/timezone").json()["tz"] == "Europe/Paris"
    assert browser.wait(lambda: live(browser) == "online", 15, "live connection back")
    browser.logs()  # the refused reconnections while the server was down are expected


def live(browser) -> str:
    return browser.driver.execute_script("return document.documentElement.dataset.live")


def test_sign_out_then_a_wrong_password_then_sign_in(browser, server):
    browser.console.clear()
    browser.click("#signout")
    browser.find("#signin-form")
    assert browser.session() is None
    sign_in(browser, "owner", "not-the-password")
    assert browser.wait(lambda: "Wrong username or password" in browser.text(".error"))
    sign_in(browser, "owner")
    browser.at("/")
    assert browser.text("#whoami") == "The Owner"
    # A reload keeps the session.
    browser.driver.refresh()
    browser.ready()
    assert browser.text("#whoami") == "The Owner"


def test_the_access_token_is_refreshed_before_it_expires(browser, server):
    owner = server.api(browser.session()["accessToken"])
    before = browser.session()
    browser.logs()
    browser.console.clear()  # the wrong password of the test before was a 401, as it should
    # Pretend the token expires in 2 s: the console refreshes it in the background (rotation).
    browser.driver.execute_script(
        "const s = JSON.parse(localStorage.getItem('hausbox.session')); s.expiresAt = Date.now() + 2000;"
        "localStorage.setItem('hausbox.session', JSON.stringify(s)); location.reload()")
    browser.ready()
    after = browser.wait(lambda: (lambda s: s if s and s["refreshToken"] != before["refreshToken"] else None)(browser.session()), 6, "token refresh")
    assert after["expiresAt"] > time.time() * 1000 + 60_000  # a fresh lifetime
    # The rotated pair is the one the page now uses (presenting the old refresh token again would
    # be taken for theft by the server, which ends the session: the auth tests cover that).
    assert owner.as_token(after["accessToken"]).get("/me").status_code == 200
    assert browser.text("#whoami") == "The Owner"
    assert not browser.errors(), browser.errors()


def test_two_tabs_share_one_session_through_a_refresh(browser, server):
    """Two tabs load at once with the session about to expire: one refreshes, the other takes its
    pair. Both refreshing with the same token would look like theft to the server, which would
    end the session of both."""
    first = browser.driver.current_window_handle
    before = browser.session()
    browser.driver.execute_script("window.other = window.open(location.href)")
    second = next(h for h in browser.driver.window_handles if h != first)
    browser.driver.switch_to.window(second)
    browser.ready()
    browser.driver.switch_to.window(first)
    browser.driver.execute_script(
        "const s = JSON.parse(localStorage.getItem('hausbox.session')); s.expiresAt = Date.now() + 3000;"
        "localStorage.setItem('hausbox.session', JSON.stringify(s)); window.other.location.reload(); location.reload()")
    browser.ready()
    browser.wait(lambda: (lambda s: s and s["refreshToken"] != before["refreshToken"])(browser.session()), 10, "token refresh")
    time.sleep(2)  # both tabs' refreshes done
    after = browser.session()
    assert after and server.api(after["accessToken"]).get("/me").status_code == 200  # the session lives
    for handle in (first, second):
        browser.driver.switch_to.window(handle)
        browser.driver.refresh()
        browser.at("/")
        assert browser.text("#whoami") == "The Owner", handle
    browser.driver.switch_to.window(second)
    browser.driver.close()
    browser.driver.switch_to.window(first)
    assert not browser.errors(), browser.errors()


def test_mfa_set_up_on_the_account_page_then_sign_in_with_a_code_and_a_backup_code(browser, server):
    owner = server.api(browser.session()["accessToken"])
    created = owner.post("/users", {"username": "guarded", "password": PASSWORD, "displayName": "Guarded", "role": "standard"})
    assert created.status_code == 201, created.text
    browser.click("#signout")
    sign_in(browser, "guarded")
    browser.at("/")
    browser.click("#whoami")
    browser.at("/account")
    assert "Off" in browser.text("#mfa-state")
    browser.click("#mfa-start")
    assert browser.find("#mfa .qr svg path")  # the QR code drawn from the server's SVG
    secret = browser.find("#mfa-secret").text
    browser.fill("#mfa-confirm-code", pyotp.TOTP(secret).now())
    browser.click("#mfa button[type='submit']")
    codes = [li.text for li in browser.wait(lambda: browser.all("#backup-codes li"), 5, "backup codes")]
    assert len(codes) == 10
    assert not browser.errors(), browser.errors()  # the QR code is drawn under the strict CSP

    browser.click("#signout")
    sign_in(browser, "guarded")
    browser.find("#mfa-form")
    assert browser.session() is None  # not signed in by the password alone
    browser.fill("#mfa-code", "000000" if pyotp.TOTP(secret).now() != "000000" else "111111")
    browser.click("#mfa-submit")
    assert browser.wait(lambda: "Invalid code" in browser.text(".error"))
    # The confirming code spent the current step: an authenticator's next code is accepted.
    browser.fill("#mfa-code", pyotp.TOTP(secret).at(time.time() + 30))
    browser.click("#mfa-submit")
    browser.at("/")
    assert browser.text("#whoami") == "Guarded"

    browser.click("#signout")
    sign_in(browser, "guarded")
    browser.click("#mfa-backup")
    browser.fill("#mfa-code", codes[0])
    browser.click("#mfa-submit")
    browser.at("/")
    assert browser.text("#whoami") == "Guarded"
    browser.logs()  # the wrong code's 401 above was expected


def test_the_account_page_changes_the_name_and_the_language(browser, server):
    browser.go("/account")
    browser.at("/account")
    browser.fill("#account-name", "Gardé")
    browser.find("#account-language option[value=fr]").click()
    browser.click("form:has(#account-name) button[type='submit']")
    browser.wait(lambda: "Profile saved" in browser.text("#account-status"), 5)
    me = server.api(browser.session()["accessToken"]).get("/me").json()
    assert (me["displayName"], me["preferences"]["language"]) == ("Gardé", "fr")
    browser.driver.refresh()
    browser.ready()
    assert browser.text("a[data-nav='/']") == "Maison" and browser.text("#whoami") == "Gardé"
