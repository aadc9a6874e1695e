"""Version polling over HTTP: a release feed on a local server, the spec's fields, the 429, shadow mode."""

from __future__ import annotations

import time

import pytest

from hausbox import __version__
from hausbox.system.versions import is_newer, parse_feed
from tests.harness import Home, wait_for
from tests.updater.release_host import ReleaseHost
from tests.wsclient import Collector, expect_welcome


@pytest.fixture
def host():
    instance = ReleaseHost()
    yield instance
    instance.close()


def feed_env(host: ReleaseHost, **extra: str) -> dict[str, str]:
    return {"HAUSBOX_RELEASE_FEED": host.feed_url, "HAUSBOX_VERSION_FIRST_POLL_S": "0.2", **extra}


def listen(home: Home) -> Collector:
    ws = home.server.ws(home.admin_pair["accessToken"])
    expect_welcome(ws)
    return Collector(ws)


def test_a_newer_release_is_announced_and_reported(make_server, host):
    host.publish("99.1.0")
    home = Home(make_server(env=feed_env(host, HAUSBOX_VERSION_FIRST_POLL_S="1.5")))
    events = listen(home)
    announced = wait_for(lambda: events.events("system.update.available"), timeout=10)
    assert announced[0]["current"] == __version__ and announced[0]["latest"] == "99.1.0"
    assert announced[0]["releaseUrl"] == f"{host.url}/releases/v99.1.0"
    info = home.admin.get("/system/version").json()
    assert info["current"] == __version__ and info["latest"] == "99.1.0" and info["updateAvailable"] is True
    assert info["releaseUrl"] == f"{host.url}/releases/v99.1.0" and info["notes"] == "hausbox 99.1.0"
    assert info["lastError"] is None and info["lastCheck"] is not None
    # This machine: no docker socket, not a compose container, not an appliance.
    assert info["dockerAvailable"] is False and info["composeManaged"] is False
    assert info["selfUpdate"]["enabled"] is False and info["selfUpdate"]["method"] is None
    assert "HAUSBOX_INSTALL_ROOT" in info["selfUpdate"]["reason"]
    # The same release seen again is not announced twice.
    assert home.admin.post("/system/version/check").status_code == 200
    assert len(events.events("system.update.available")) == 1
    # A standard user reads the version but may not force a check.
    _, standard = home.new_user("standard")
    seen_by_standard = standard.get("/system/version")
    assert seen_by_standard.status_code == 200 and seen_by_standard.json()["feedUrl"] is None
    assert info["feedUrl"] == host.feed_url
    assert standard.post("/system/version/check").status_code == 403


def test_the_same_or_an_older_release_is_no_update(make_server, host):
    host.publish(__version__)
    home = Home(make_server(env=feed_env(host, HAUSBOX_VERSION_FIRST_POLL_S="1")))
    events = listen(home)
    info = wait_for(lambda: (lambda i: i["lastCheck"] and i)(home.admin.get("/system/version").json()), timeout=10)  # the scheduled poll
    assert info["latest"] == __version__ and info["updateAvailable"] is False and info["lastError"] is None
    host.publish("0.0.1")
    info = home.admin.post("/system/version/check").json()
    assert info["latest"] == "0.0.1" and info["updateAvailable"] is False and info["lastError"] is None
    time.sleep(0.5)
    assert events.events("system.update.available") == []


def test_a_feed_that_fails_is_reported_never_a_500(make_server, host):
    host.fail_feed()
    home = Home(make_server(env=feed_env(host)))
    info = wait_for(lambda: (lambda i: i["lastError"] and i)(home.admin.get("/system/version").json()), timeout=10)
    assert info["latest"] is None and info["updateAvailable"] is False
    assert "404" in info["lastError"] and info["lastCheck"] is not None
    host.close()  # nothing listens any more
    response = home.admin.post("/system/version/check")
    assert response.status_code == 200, response.text
    assert "could not be reached" in response.json()["lastError"]


def test_a_forced_check_within_10_seconds_is_a_429(make_server, host):
    host.publish("99.0.0")
    home = Home(make_server(env=feed_env(host, HAUSBOX_VERSION_FIRST_POLL_S="3600")))
    assert home.admin.post("/system/version/check").status_code == 200
    again = home.admin.post("/system/version/check")
    assert again.status_code == 429
    assert 1 <= int(again.headers["Retry-After"]) <= 10
    assert host.feed_requests() == 1


def test_shadow_mode_holds_polling(make_server, host):
    host.publish("99.0.0")
    home = Home(make_server(env=feed_env(host, SERVICE_SHADOW_MODE="1")))
    time.sleep(1.5)  # past the first poll
    info = home.admin.post("/system/version/check").json()
    assert host.feed_requests() == 0
    assert info["held"] and info["lastCheck"] is None and info["updateAvailable"] is False


def test_the_feed_setting_names_the_feed(make_server, host):
    host.publish("99.2.0")
    home = Home(make_server(env={"HAUSBOX_VERSION_FIRST_POLL_S": "0.2"}))
    info = wait_for(lambda: (lambda i: i["lastError"] and i)(home.admin.get("/system/version").json()), timeout=10)
    assert "no release feed configured" in info["lastError"] and info["feedUrl"] is None
    assert home.admin.put("/settings", {"system.update.feedUrl": host.feed_url}).status_code == 200
    info = home.admin.post("/system/version/check").json()
    assert info["latest"] == "99.2.0" and info["feedUrl"] == host.feed_url


def test_update_and_restart_are_503_off_the_appliance(make_server, host):
    host.publish("99.0.0")
    home = Home(make_server(env=feed_env(host)))
    wait_for(lambda: home.admin.get("/system/version").json()["updateAvailable"], timeout=10)
    response = home.admin.post("/system/update")
    assert response.status_code == 503
    assert "HAUSBOX_INSTALL_ROOT" in response.json()["error"]
    restart = home.admin.post("/system/restart")
    assert restart.status_code == 503 and "HAUSBOX_RESTART_COMMAND" in restart.json()["error"]
    _, standard = home.new_user("standard")
    assert standard.post("/system/update").status_code == 403


def test_feed_shapes_and_semver_order():
    ours = parse_feed({"version": "v1.2.0", "releaseUrl": "https://x/r", "notes": "n", "artifact": {"url": "a.zip", "sha256": "a" * 64, "size": 10}}, "https://x/feed/latest.json")
    assert ours == {"version": "1.2.0", "releaseUrl": "https://x/r", "notes": "n", "artifact": {"url": "https://x/feed/a.zip", "sha256": "a" * 64, "size": 10}}
    github = {
        "tag_name": "v2.0.0-rc.1", "html_url": "https://gh/r", "body": "notes",
        "assets": [{"name": "other.txt"}, {"name": "hausbox-2.0.0-rc.1-wheelhouse.zip", "browser_download_url": "https://gh/a.zip", "size": 5, "digest": "sha256:" + "b" * 64}],
    }  # fmt: skip
    assert parse_feed(github, "https://api/latest")["artifact"] == {"url": "https://gh/a.zip", "sha256": "b" * 64, "size": 5}
    assert parse_feed({**github, "assets": []}, "https://api/latest")["artifact"] is None
    for bad in ({"version": "latest"}, {"name": "x"}, {"version": "1.0.0", "artifact": {"url": "a", "sha256": "short", "size": 1}}, []):
        with pytest.raises(ValueError):
            parse_feed(bad, "https://x/")
    assert is_newer("1.10.0", "1.9.9") and is_newer("2.0.0", "2.0.0-rc.2") and is_newer("2.0.0-rc.10", "2.0.0-rc.2")
    assert not is_newer("1.0.0", "1.0.0") and not is_newer("0.9.0", "1.0.0") and not is_newer("2.0.0-1", "2.0.0-alpha")
