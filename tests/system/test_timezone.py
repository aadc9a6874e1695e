"""The home's time zone: TZ, else the home location, else UTC; GET /system/timezone; moving asks for a restart."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from hausbox.system.timezone import ZoneChoice, lookup_zone_name, resolve_zone
from tests.harness import Home
from tests.wsclient import Collector, expect_welcome

PARIS_AT = {"home.latitude": 48.8566, "home.longitude": 2.3522}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def expected_offset(name: str) -> float:
    offset = datetime.now(timezone.utc).astimezone(ZoneInfo(name)).utcoffset()
    return round(offset.total_seconds() / 3600, 2)


def never_called(latitude, longitude):
    raise AssertionError("no lookup expected")


# ---- resolution (unit) ---------------------------------------------------------------------------


def test_env_wins_over_the_location():
    choice = resolve_zone(PARIS_AT, env={"TZ": "America/New_York"}, lookup=never_called)
    assert (choice.name, choice.source, choice.tz) == ("America/New_York", "env", ZoneInfo("America/New_York"))
    assert resolve_zone({}, env={"TZ": ":Asia/Tokyo"}, lookup=never_called).name == "Asia/Tokyo"  # glibc's ":" form


def test_location_when_tz_is_unset_empty_or_unknown():
    calls = []

    def lookup(latitude, longitude):
        calls.append((latitude, longitude))
        return "Europe/Paris"

    for env in ({}, {"TZ": ""}, {"TZ": "Not/AZone"}):
        choice = resolve_zone({"home.latitude": "48.8566", "home.longitude": "2.3522"}, env=env, lookup=lookup)
        assert (choice.name, choice.source) == ("Europe/Paris", "location")
    assert calls == [(48.8566, 2.3522)] * 3


def test_default_utc_without_a_usable_location():
    for settings in ({}, {"home.latitude": 48.8}, {"home.latitude": "north", "home.longitude": 2.3}, {"home.latitude": 95, "home.longitude": 2}):
        choice = resolve_zone(settings, env={}, lookup=never_called)
        assert (choice.name, choice.source) == ("UTC", "default")
    # A lookup that finds nothing, or an unknown name, falls back too.
    assert resolve_zone(PARIS_AT, env={}, lookup=lambda la, lo: None).source == "default"
    assert resolve_zone(PARIS_AT, env={}, lookup=lambda la, lo: "Atlantis/Capital").source == "default"


def test_real_lookup_finds_the_zone_of_coordinates():
    assert lookup_zone_name(48.8566, 2.3522) == "Europe/Paris"
    assert lookup_zone_name(35.6762, 139.6503) == "Asia/Tokyo"
    assert lookup_zone_name(-33.8688, 151.2093) == "Australia/Sydney"
    assert ZoneInfo(lookup_zone_name(0.0, -30.0))  # mid-ocean: a nautical Etc/ zone, still a real one


def test_offset_hours_follows_daylight_saving_and_half_hours():
    paris = ZoneChoice(ZoneInfo("Europe/Paris"), "Europe/Paris", "location")
    assert paris.offset_hours(ms(datetime(2024, 7, 1, tzinfo=timezone.utc))) == 2
    assert paris.offset_hours(ms(datetime(2024, 1, 1, tzinfo=timezone.utc))) == 1
    kolkata = ZoneChoice(ZoneInfo("Asia/Kolkata"), "Asia/Kolkata", "env")
    assert kolkata.json(0) == {"tz": "Asia/Kolkata", "source": "env", "offsetHours": 5.5}
    assert ZoneChoice(ZoneInfo("America/New_York"), "America/New_York", "env").offset_hours(0) == -5


# ---- over HTTP -----------------------------------------------------------------------------------


def test_timezone_route_reports_the_env_zone_to_any_user(make_server):
    server = make_server(env={"TZ": "America/New_York"})
    home = Home(server)
    _, standard = home.new_user("standard")
    for api in (home.admin, standard):
        response = api.get("/system/timezone")
        assert response.status_code == 200, response.text
        assert response.json() == {"tz": "America/New_York", "source": "env", "offsetHours": expected_offset("America/New_York")}
    assert server.api().get("/system/timezone").status_code == 401


def test_location_decides_the_zone_after_a_restart_and_env_still_wins(make_server):
    server = make_server(env={"TZ": ""})
    home = Home(server)
    assert home.admin.get("/system/timezone").json() == {"tz": "UTC", "source": "default", "offsetHours": 0}

    ws = server.ws(home.admin_pair["accessToken"])
    expect_welcome(ws)
    client = Collector(ws)  # never subscribed: topic system is the default
    try:
        response = home.admin.put("/settings", {"home.latitude": "48.8566", "home.longitude": "2.3522"})
        assert response.status_code == 200, response.text
        client.wait_for(lambda c: c.events("system.restart_required"), timeout=3)
        assert client.events("system.restart_required") == [{"type": "system.restart_required", "reason": "home_location_changed"}]
        # The zone is fixed for the process: nothing changes until the restart.
        assert home.admin.get("/system/timezone").json()["source"] == "default"
        # Writing the same coordinates again changes nothing and asks for nothing.
        mark = client.mark()
        assert home.admin.put("/settings", {"home.latitude": "48.8566"}).json()["changed"] == []
        response = home.admin.put("/settings", {"home.sunriseOffset": 20})
        assert response.status_code == 200
        client.wait_for(lambda c: any(e.get("keys") == ["home.sunriseOffset"] for m in c.messages_since(mark) for e in (m if isinstance(m, list) else [m])), timeout=3)
        assert len(client.events("system.restart_required")) == 1
    finally:
        client.close()

    server.restart()
    assert home.admin.get("/system/timezone").json() == {"tz": "Europe/Paris", "source": "location", "offsetHours": expected_offset("Europe/Paris")}
    # The root zone shows the day's sunrise and sunset at the home.
    aggregation = home.admin.get("/zones/aggregation").json()
    roots = [data for data in aggregation.values() if data["sunrise"] is not None]
    assert len(roots) == 1 and isinstance(roots[0]["isDaylight"], bool), aggregation
    assert len(roots[0]["sunrise"]) == 5 and roots[0]["sunrise"] < roots[0]["sunset"]
    server.stop()

    # Same data (coordinates stored), but TZ set: the environment wins.
    env_server = make_server(data_dir=server.data_dir, env={"TZ": "Asia/Tokyo"})
    assert env_server.api(home.admin_pair["accessToken"]).get("/system/timezone").json() == {"tz": "Asia/Tokyo", "source": "env", "offsetHours": 9}


@pytest.mark.parametrize(
    "values, key",
    [
        ({"home.latitude": "north"}, "home.latitude"),
        ({"home.latitude": 90.5}, "home.latitude"),
        ({"home.latitude": True}, "home.latitude"),
        ({"home.longitude": "-181"}, "home.longitude"),
        ({"ui.theme": "dark", "home.longitude": "1e400"}, "home.longitude"),
        ({"home.sunsetOffset": "later"}, "home.sunsetOffset"),
    ],
)
def test_bad_location_settings_are_refused_with_a_400_naming_the_key(home, values, key):
    response = home.admin.put("/settings", values)
    assert response.status_code == 400, response.text
    assert key in response.json()["error"]
    stored = home.admin.get("/settings").json()
    assert not any(k in stored for k in values)  # all or nothing


def test_good_location_settings_are_stored_as_sent(home):
    values = {"home.latitude": "-33.8688", "home.longitude": 151.2093, "home.sunriseOffset": 0, "home.sunsetOffset": "-15"}
    response = home.admin.put("/settings", values)
    assert response.status_code == 200, response.text
    stored = home.admin.get("/settings").json()
    assert {k: stored[k] for k in values} == values
    # An emptied field and a deletion are both allowed.
    assert home.admin.put("/settings", {"home.latitude": "", "home.longitude": None}).status_code == 200
    stored = home.admin.get("/settings").json()
    assert stored["home.latitude"] == "" and "home.longitude" not in stored
