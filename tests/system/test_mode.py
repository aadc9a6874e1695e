"""GET /system/mode: normal, or shadow (SERVICE_SHADOW_MODE=1) with a takeover pending."""

from __future__ import annotations

from tests.harness import Home


def test_mode_is_normal_by_default_for_any_user(home):
    _, standard = home.new_user("standard")
    for api in (home.admin, standard):
        response = api.get("/system/mode")
        assert response.status_code == 200, response.text
        assert response.json() == {"mode": "normal", "takeoverPending": False}
    assert home.server.api().get("/system/mode").status_code == 401


def test_shadow_mode_is_reported_with_a_pending_takeover(make_server):
    home = Home(make_server(env={"SERVICE_SHADOW_MODE": "1"}))
    assert home.admin.get("/system/mode").json() == {"mode": "shadow", "takeoverPending": True}
