"""Calendar routes over HTTP: seeded profiles, the active profile, slots CRUD, 400s naming the
field, 404s, admin-only writes."""

from __future__ import annotations

import pytest

ADMIN_REQUIRED = {"error": "Admin access required"}


@pytest.fixture(scope="module")
def standard(home):
    return home.new_user("standard")[1]


@pytest.fixture(scope="module")
def mode_id(home):
    return home.admin.post("/modes", {"name": "Morning"}).json()["id"]


def test_profiles_are_seeded_and_work_is_active_by_default(home):
    profiles = home.admin.get("/calendar/profiles").json()
    assert [(p["id"], p["name"], p["builtIn"]) for p in profiles] == [("holidays", "Holidays", True), ("work", "Work", True)]
    active = home.admin.get("/calendar/active").json()
    assert active["profile"]["id"] == "work" and isinstance(active["slots"], list)


def test_slots_crud_and_the_active_profile(home, mode_id):
    created = home.admin.post("/calendar/profiles/holidays/slots", {"days": [6, 0], "time": "09:30", "modeActions": [{"modeId": mode_id, "action": "on"}]})
    assert created.status_code == 201, created.text
    slot = created.json()
    assert (slot["profileId"], slot["days"], slot["time"], slot["modeActions"], slot["nextRunAt"]) == ("holidays", [0, 6], "09:30", [{"modeId": mode_id, "action": "on"}], None)
    assert [s["id"] for s in home.admin.get("/calendar/profiles/holidays/slots").json()] == [slot["id"]]

    switched = home.admin.put("/calendar/active", {"profileId": "holidays"})
    assert switched.status_code == 200
    assert switched.json()["profile"]["id"] == "holidays" and switched.json()["slots"][0]["nextRunAt"].endswith("Z")
    assert home.admin.get("/settings").json()["calendar.activeProfileId"] == "holidays"

    updated = home.admin.put(f"/calendar/slots/{slot['id']}", {"time": "10:00", "modeActions": [{"modeId": mode_id, "action": "off"}]})
    assert updated.status_code == 200
    assert (updated.json()["time"], updated.json()["days"], updated.json()["modeActions"][0]["action"]) == ("10:00", [0, 6], "off")
    assert home.admin.delete(f"/calendar/slots/{slot['id']}").status_code == 204
    assert home.admin.delete(f"/calendar/slots/{slot['id']}").status_code == 404
    assert home.admin.put(f"/calendar/slots/{slot['id']}", {"time": "10:00"}).status_code == 404
    assert home.admin.get("/calendar/profiles/holidays/slots").json() == []
    assert home.admin.put("/calendar/active", {"profileId": "work"}).json()["profile"]["id"] == "work"


def test_validation_names_the_field_and_unknown_things_are_404(home, mode_id):
    good = {"days": [1], "time": "07:00", "modeActions": [{"modeId": mode_id, "action": "on"}]}
    cases = [
        ({"time": "07:00", "modeActions": []}, "days is required"),
        ({**good, "days": []}, "days must have at least 1 items"),
        ({**good, "days": [1, 8]}, "days[1] must be at most 6"),
        ({**good, "days": [1.5]}, "days[0] must be an integer"),
        ({**good, "days": [2, 2]}, "days[1]: day 2 is listed twice"),
        ({**good, "time": "7h"}, "time must be HH:MM from 00:00 to 23:59, got '7h'"),
        ({**good, "time": None}, "time must be a string"),
        ({**good, "modeActions": [{"modeId": mode_id, "action": "flip"}]}, "modeActions[0].action must be one of on, off"),
        ({**good, "modeActions": [{"modeId": "ghost", "action": "on"}]}, "modeActions[0].modeId: mode not found: ghost"),
        ({**good, "modeActions": [{"action": "on"}]}, "modeActions[0].modeId is required"),
    ]
    for body, message in cases:
        response = home.admin.post("/calendar/profiles/work/slots", body)
        assert (response.status_code, response.json()) == (400, {"error": message}), body
    assert home.admin.post("/calendar/profiles/ghost/slots", good).status_code == 404
    assert home.admin.get("/calendar/profiles/ghost/slots").status_code == 404
    response = home.admin.put("/calendar/active", {"profileId": "ghost"})
    assert (response.status_code, response.json()) == (400, {"error": "profileId: calendar profile not found: ghost"})
    assert home.admin.put("/calendar/active", {}).json() == {"error": "profileId is required"}


def test_a_standard_user_reads_the_calendar_but_never_changes_it(home, standard, mode_id):
    slot = home.admin.post("/calendar/profiles/work/slots", {"days": [2], "time": "06:45", "modeActions": []}).json()
    assert standard.get("/calendar/profiles").status_code == 200
    assert standard.get("/calendar/active").status_code == 200
    assert standard.get("/calendar/profiles/work/slots").status_code == 200
    for method, path, body in [
        ("PUT", "/calendar/active", {"profileId": "holidays"}),
        ("POST", "/calendar/profiles/work/slots", {"days": [1], "time": "07:00", "modeActions": []}),
        ("PUT", f"/calendar/slots/{slot['id']}", {"time": "07:00"}),
        ("DELETE", f"/calendar/slots/{slot['id']}", None),
    ]:
        response = standard.request(method, path, body)
        assert (response.status_code, response.json()) == (403, ADMIN_REQUIRED), (method, path)
    assert home.admin.get("/calendar/active").json()["profile"]["id"] == "work"
