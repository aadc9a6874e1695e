"""A plugin installed through the real server over HTTP, and a restart of the process."""

from __future__ import annotations

from tests.harness import Home, wait_for
from tests.plugins.helpers import entry, plugin_archive


def test_an_installed_plugin_brings_its_devices_back_after_a_process_restart(make_server, host):
    server = make_server()
    home = Home(server)
    admin = home.admin
    assert admin.put("/settings", host.settings()).status_code == 200
    host.registry(entry())
    host.release("hausbox/meteo", "1.0.0", plugin_archive())
    response = admin.post("/plugins/install", {"repo": "hausbox/meteo"})
    assert response.status_code == 200, response.text

    def meteo_devices():
        return [d for d in admin.get("/devices").json() if d["integrationId"] == "meteo"]

    assert wait_for(lambda: len(meteo_devices()) == 1)
    server.restart()
    admin = server.api(home.login("admin")["accessToken"])
    assert wait_for(lambda: admin.get("/plugins").json()[0]["status"] == "connected", timeout=10)
    assert len(meteo_devices()) == 1
    assert admin.get("/plugins", headers={"Authorization": ""}).status_code == 401
