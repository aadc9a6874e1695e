"""GET /system/alarms: the alarms active now, for a client that connects after they were raised."""

from __future__ import annotations

from tests.harness import Home, wait_for


def test_an_alarm_raised_before_the_client_came_is_listed_then_gone_once_resolved(make_server):
    # Storage "low" below an absurd threshold: the storage watch raises its alarm at start.
    server = make_server(env={"HAUSBOX_STORAGE_LOW_BYTES": str(1 << 60)})
    home = Home(server)
    _, standard = home.new_user("standard")
    alarms = wait_for(lambda: home.admin.get("/system/alarms").json()["alarms"], timeout=10)
    assert [a["source"] for a in alarms] and all(set(a) == {"alarmId", "level", "source", "message", "raisedAt"} for a in alarms)
    assert standard.get("/system/alarms").json() == {"alarms": alarms}
    assert server.api().get("/system/alarms").status_code == 401

    server.stop()
    server.extra_env["HAUSBOX_STORAGE_LOW_BYTES"] = "1"
    server.start()
    assert wait_for(lambda: home.admin.get("/system/alarms").json() == {"alarms": []}, timeout=10)
