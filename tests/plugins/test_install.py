"""Plugins through the API, in process, against a local registry and release host."""

from __future__ import annotations

import json

import gevent

from tests.plugins.helpers import archive, entry, manifest, plugin_archive, sha


def call(house, method, path, body=None, token=None):
    status, _headers, content = house.api(method, path, body, token)
    return status, (json.loads(content) if content else None)


def wait(predicate, timeout=5.0):
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return True
        gevent.sleep(0.02)
    return predicate()


def plugin(house, plugin_id):
    return next((p for p in call(house, "GET", "/plugins")[1] if p["id"] == plugin_id), None)


def devices_of(house, integration_id):
    return [d for d in call(house, "GET", "/devices")[1] if d["integrationId"] == integration_id]


def test_an_official_integration_installs_brings_devices_and_survives_a_restart(plugin_house, host):
    house = plugin_house
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    status, body = call(house, "POST", "/plugins/install", {"repo": "  hausbox/meteo "})
    assert status == 200, body
    assert body["success"] is True and body["manifest"]["id"] == "meteo"
    assert wait(lambda: plugin(house, "meteo")["status"] == "connected")
    listed = plugin(house, "meteo")
    assert listed["source"] == "registry" and listed["trust"] == "official" and listed["enabled"] is True
    assert wait(lambda: len(devices_of(house, "meteo")) == 1)
    assert devices_of(house, "meteo")[0]["name"] == "Station garden"
    assert listed["deviceCount"] == 1
    assert (house.data_dir / "plugins" / "meteo" / "__init__.py").is_file()

    house.restart()
    house.start()
    assert wait(lambda: plugin(house, "meteo")["status"] == "connected")
    assert len(devices_of(house, "meteo")) == 1


def test_a_file_changed_on_disk_after_install_is_refused_at_the_next_load(plugin_house, host):
    house = plugin_house
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    assert call(house, "POST", "/plugins/install", {"repo": "hausbox/meteo"})[0] == 200
    (house.data_dir / "plugins" / "meteo" / "__init__.py").write_text("raise SystemExit('tampered')\n")
    house.restart()
    house.start()
    listed = plugin(house, "meteo")
    assert listed["status"] == "error" and "integrity check failed" in listed["error"]
    assert house.engine.integrations.get("meteo") is None


def test_a_community_plugin_needs_confirmation(plugin_house, host):
    house = plugin_house
    host.registry(entry(repo="someone/meteo"))
    host.release("someone/meteo", "1.0.0", plugin_archive(repo="someone/meteo"))
    status, body = call(house, "POST", "/plugins/install", {"repo": "someone/meteo"})
    assert status == 409 and body["code"] == "CommunityPluginConfirmationRequired"
    assert not (house.data_dir / "plugins" / "meteo").exists()
    status, body = call(house, "POST", "/plugins/install", {"repo": "someone/meteo", "confirmed": True})
    assert status == 200, body
    assert plugin(house, "meteo")["trust"] == "community"


def test_a_personal_plugin_is_pinned_and_a_different_archive_at_update_is_refused(plugin_house, host):
    house = plugin_house
    first = plugin_archive(repo="me/meteo")
    host.release("me/meteo", "1.0.0", first, latest=True)
    assert call(house, "POST", "/plugins/sources", {"repo": "bad repo"})[0] == 400
    assert call(house, "POST", "/plugins/sources", {"repo": " me/meteo "})[0] == 201
    assert call(house, "GET", "/plugins/sources")[1][0]["repo"] == "me/meteo"
    store = call(house, "GET", "/plugins/store")[1]
    assert [(p["repo"], p["trust"], p["compatible"]) for p in store] == [("me/meteo", "personal", True)]

    status, body = call(house, "POST", "/plugins/install", {"repo": "me/meteo"})
    assert status == 409 and body["code"] == "PersonalPluginConfirmationRequired"
    assert {k: body[k] for k in ("repo", "owner", "version", "sha256")} == {"repo": "me/meteo", "owner": "me", "version": "1.0.0", "sha256": sha(first)}
    status, body = call(house, "POST", "/plugins/install", {"repo": "me/meteo", "confirmed": True, "expectedSha256": "0" * 64})
    assert status == 409 and body["sha256"] == sha(first)
    assert not (house.data_dir / "plugins" / "meteo").exists()
    status, body = call(house, "POST", "/plugins/install", {"repo": "me/meteo", "confirmed": True, "expectedSha256": sha(first)})
    assert status == 200, body
    assert plugin(house, "meteo")["pinnedSha256"] == sha(first)

    # the host now serves another archive: the approved hash does not match it
    second = plugin_archive(repo="me/meteo", version="1.1.0", code="def create(context):\n    raise RuntimeError('evil')\n")
    host.release("me/meteo", "1.1.0", second, latest=True)
    status, body = call(house, "POST", "/plugins/meteo/update", {"confirmed": True, "expectedSha256": sha(first)})
    assert status == 409 and body["code"] == "PersonalPluginConfirmationRequired" and body["sha256"] == sha(second)
    assert plugin(house, "meteo")["version"] == "1.0.0" and plugin(house, "meteo")["pinnedSha256"] == sha(first)
    assert wait(lambda: plugin(house, "meteo")["status"] == "connected")

    # the archive kept on disk replaced by another one: refused at the next load
    (house.data_dir / "plugins" / ".archives" / "meteo.zip").write_bytes(second)
    house.restart()
    house.start()
    listed = plugin(house, "meteo")
    assert listed["status"] == "error" and "is not the pinned" in listed["error"]


def test_missing_plugin_files_are_fetched_again_and_checked_against_the_recorded_hash(plugin_house, host):
    house = plugin_house
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    assert call(house, "POST", "/plugins/install", {"repo": "hausbox/meteo"})[0] == 200
    house.stop()
    import shutil

    shutil.rmtree(house.data_dir / "plugins")
    house.restart()
    house.start()
    assert wait(lambda: plugin(house, "meteo")["status"] == "connected")
    assert (house.data_dir / "plugins" / "meteo" / "__init__.py").is_file()

    # same version, other bytes on the release host: refused
    house.stop()
    shutil.rmtree(house.data_dir / "plugins")
    host.release("hausbox/meteo", "1.0.0", plugin_archive(description="changed"))
    house.restart()
    house.start()
    assert wait(lambda: plugin(house, "meteo")["status"] == "error")
    assert "integrity check failed" in plugin(house, "meteo")["error"]
    assert not (house.data_dir / "plugins" / "meteo").exists()


def test_a_recipe_plugin_installs_lists_and_runs(plugin_house, host):
    house = plugin_house
    host.registry(entry("echo-watch", "hausbox/echo", kind="recipe"))
    host.release("hausbox/echo", "1.0.0", plugin_archive("recipe", plugin_id="echo-watch", repo="hausbox/echo"))
    status, body = call(house, "POST", "/plugins/install", {"repo": "hausbox/echo"})
    assert status == 200, body
    assert "echo-watch" in [r["id"] for r in call(house, "GET", "/recipes")[1]]
    assert plugin(house, "echo-watch")["status"] == "connected"
    lamp = house.light("lamp")
    status, created = call(house, "POST", "/recipe-instances", {"recipeId": "echo-watch", "params": {"equipment": lamp}})
    assert status == 201, created
    house.report("lamp", state="ON")
    house.report("lamp", state="OFF")
    assert house.recipe_state(created["id"])["seen"] >= 2

    assert call(house, "POST", "/plugins/echo-watch/disable")[0] == 200
    assert "echo-watch" not in [r["id"] for r in call(house, "GET", "/recipes")[1]]
    assert call(house, "POST", "/plugins/echo-watch/enable")[0] == 200
    assert "echo-watch" in [r["id"] for r in call(house, "GET", "/recipes")[1]]
    assert call(house, "POST", "/plugins/echo-watch/uninstall")[0] == 200
    assert plugin(house, "echo-watch") is None and not (house.data_dir / "plugins" / "echo-watch").exists()


def test_unsafe_archives_are_refused_and_nothing_is_written(plugin_house, host, monkeypatch):
    house = plugin_house
    good = manifest(repo="hausbox/bad")
    cases = {
        "slip": archive({"manifest.json": json.dumps(good), "__init__.py": "", "../../escape.py": "x"}),
        "absolute": archive({"manifest.json": json.dumps(good), "__init__.py": "", "/etc/evil": "x"}),
        "link": archive({"manifest.json": json.dumps(good), "__init__.py": ""}, links={"data": "/etc"}),
        "big": archive({"manifest.json": json.dumps(good), "__init__.py": "x" * 4096}),
        "notzip": b"not a zip",
        "nomanifest": archive({"__init__.py": ""}),
    }
    from hausbox.plugins import install

    monkeypatch.setattr(install, "MAX_UNPACKED_BYTES", 2048)
    for name, data in cases.items():
        host.registry(entry("meteo", "hausbox/bad"))
        host.release("hausbox/bad", "1.0.0", data)
        status, body = call(house, "POST", "/plugins/install", {"repo": "hausbox/bad"})
        assert status == 400, (name, body)
        leftovers = list((house.data_dir / "plugins").rglob("*")) if (house.data_dir / "plugins").exists() else []
        assert leftovers == [], (name, leftovers)
    assert not (house.data_dir.parent / "escape.py").exists()
    assert call(house, "GET", "/plugins")[1] == []


def test_a_broken_plugin_is_reported_and_harms_no_other(plugin_house, host):
    house = plugin_house
    host.registry(entry(), entry("broken", "hausbox/broken"), entry("crashy", "hausbox/crashy"), entry("sneaky", "hausbox/sneaky"))
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    host.release("hausbox/broken", "1.0.0", plugin_archive(plugin_id="broken", repo="hausbox/broken", code="import nothing_here\n"))
    crashy = "class P:\n    id = name = 'crashy'\n    def __init__(self, c): pass\n    def is_configured(self): return True\n" \
             "    def start(self): raise RuntimeError('boom')\n    def settings_schema(self): raise RuntimeError('no schema')\n" \
             "    def status(self): return 'connected'\n    def stop(self): pass\n\ndef create(context):\n    return P(context)\n"  # fmt: skip
    host.release("hausbox/crashy", "1.0.0", plugin_archive(plugin_id="crashy", repo="hausbox/crashy", code=crashy))
    host.release("hausbox/sneaky", "1.0.0", plugin_archive(plugin_id="sneaky", repo="hausbox/sneaky", code="from hausbox.core import secrets\n"))
    for repo in ("hausbox/broken", "hausbox/meteo", "hausbox/crashy", "hausbox/sneaky"):
        assert call(house, "POST", "/plugins/install", {"repo": repo})[0] == 200
    assert wait(lambda: plugin(house, "crashy")["status"] == "error")
    assert "ModuleNotFoundError" in plugin(house, "broken")["error"]
    assert "boom" in plugin(house, "crashy")["error"]
    assert "a plugin may use only hausbox.sdk" in plugin(house, "sneaky")["error"]
    assert plugin(house, "meteo")["status"] == "connected"
    assert call(house, "GET", "/integrations")[0] == 200
    house.restart()
    house.start()
    assert wait(lambda: plugin(house, "meteo")["status"] == "connected")
    assert plugin(house, "broken")["status"] == "error"


def test_store_lists_trust_and_compatibility_and_falls_back_to_the_shipped_copy(plugin_house, host):
    house = plugin_house
    host.registry(entry(), entry("other", "someone/other", sowelVersion=">=99.0.0"))
    status, store = call(house, "GET", "/plugins/store")
    assert status == 200
    assert [(p["id"], p["trust"], p["compatible"]) for p in store] == [("meteo", "official", True), ("other", "community", False)]
    assert "99.0.0" in store[1]["compatReason"]
    status, body = call(house, "POST", "/plugins/install", {"repo": "someone/other", "confirmed": True})
    assert status == 400 and "not compatible" in body["error"]
    host.files.pop("/registry.json")
    assert call(house, "GET", "/plugins/store")[1][0]["id"] == "meteo"  # cached
    assert call(house, "POST", "/plugins/store/refresh")[1] == {"count": 0, "source": "local"}
    assert call(house, "GET", "/plugins/store")[1] == []
    assert call(house, "POST", "/plugins/install", {"repo": "nobody/nothing"})[0] == 404


def test_the_oauth_callback_is_public_and_the_plugin_checks_its_state(plugin_house, host):
    house = plugin_house
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    assert call(house, "POST", "/plugins/install", {"repo": "hausbox/meteo"})[0] == 200
    house.engine.settings.set("integration.meteo.oauth_state", "s1")
    status, headers, _ = house.api("GET", "/plugins/meteo/oauth/callback?code=abc&state=wrong", token="")
    assert status == 302 and "oauth_error=" in headers["Location"]
    status, headers, _ = house.api("GET", "/plugins/meteo/oauth/callback?code=abc&state=s1", token="")
    assert status == 302 and headers["Location"].endswith("oauth_success=1")
    assert house.engine.settings.get("integration.meteo.oauth_code") == "abc"
    assert house.api("GET", "/plugins/nope/oauth/callback", token="")[0] == 404


def test_shadow_mode_holds_plugins(make_house, host, tmp_path):
    house = make_house(data_dir=tmp_path / "d")
    house.engine.settings.set_many(host.settings())
    house.start()
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    assert call(house, "POST", "/plugins/install", {"repo": "hausbox/meteo"})[0] == 200
    house.stop()
    shadow = make_house(data_dir=tmp_path / "d", shadow_mode=True)
    shadow.start()
    listed = shadow.engine.plugins.list_json()[0]
    assert listed["status"] == "disconnected" and listed["error"].startswith("held")
    assert shadow.engine.integrations.get("meteo") is None
