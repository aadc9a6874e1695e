"""Administrative changes are logged at info, saying what changed and who did it (real server, GET /logs).

Settings (keys and new values, never a secret's), the log level, users, API tokens and the
integrations an administrator starts or stops: each shows up in the log view an administrator reads.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.harness import wait_for

SIM = "integration.simulator."


def logged(home, search: str, module: str) -> list[dict[str, Any]]:
    """The info-and-above entries of ``module`` whose message contains ``search``."""
    response = home.admin.get("/logs", params={"search": search, "module": module, "level": "info", "limit": 2000})
    assert response.status_code == 200, response.text
    return response.json()["entries"]


def one_line(home, search: str, module: str) -> str:
    entries = logged(home, search, module)
    assert len(entries) == 1, (search, entries)
    assert entries[0]["level"] == "info"
    return entries[0]["msg"]


def test_a_settings_change_names_its_keys_and_values_but_not_a_secret(home):
    secret = f"bot-{uuid.uuid4().hex}"
    name = f"Maison {uuid.uuid4().hex[:6]}"
    response = home.admin.put("/settings", {"home.name": name, "notify.telegram.botToken": secret})
    assert response.status_code == 200, response.text

    line = one_line(home, name, "settings")
    assert line == f'settings changed by admin: home.name = "{name}", notify.telegram.botToken set (secret, not shown)'

    assert home.admin.put("/settings", {"home.name": None, "notify.telegram.botToken": None}).status_code == 200
    assert logged(home, "settings changed by admin: home.name removed, notify.telegram.botToken removed", "settings")
    entries = home.admin.get("/logs", params={"limit": 2000}).json()["entries"]
    assert not any(secret in entry["msg"] for entry in entries)


def test_a_write_that_changes_nothing_logs_nothing(home):
    assert home.admin.put("/settings", {"home.unchanged": 5}).status_code == 200
    assert home.admin.put("/settings", {"home.unchanged": 5}).json()["changed"] == []
    assert len(logged(home, "home.unchanged", "settings")) == 1


def test_a_log_level_change_is_in_the_log_whichever_way_it_goes(home):
    assert home.admin.put("/logs/level", {"level": "error"}).status_code == 200
    assert home.admin.put("/logs/level", {"level": "debug"}).status_code == 200
    assert one_line(home, "log level changed from debug to error", "logs") == "log level changed from debug to error by admin"
    assert one_line(home, "log level changed from error to debug", "logs") == "log level changed from error to debug by admin"


def test_users_created_changed_and_deleted_are_logged_without_their_password(home):
    password = f"pw-{uuid.uuid4().hex}"
    username = f"logged-{uuid.uuid4().hex[:8]}"
    created = home.admin.post("/users", {"username": username, "password": password, "displayName": "Logged", "role": "standard"})
    assert created.status_code == 201, created.text
    user_id = created.json()["id"]
    assert home.admin.put(f"/users/{user_id}", {"displayName": "Renamed", "role": "admin", "enabled": False}).status_code == 200
    assert home.admin.delete(f"/users/{user_id}").status_code == 204

    lines = [entry["msg"] for entry in logged(home, user_id, "auth")]
    assert lines == [
        f"user {username} ({user_id}) created with role standard by admin",
        f"user {username} ({user_id}) updated: displayName, role admin, disabled by admin",
        f"user {username} ({user_id}) deleted by admin",
    ]
    entries = home.admin.get("/logs", params={"limit": 2000}).json()["entries"]
    assert not any(password in entry["msg"] for entry in entries)


def test_own_profile_changes_are_logged_as_the_user(home):
    user, api = home.new_user("standard")
    assert api.put("/me", {"displayName": "Me again"}).status_code == 200
    assert api.put("/me/preferences", {"preferences": {"language": "fr"}}).status_code == 200
    name = user["username"]
    assert [entry["msg"] for entry in logged(home, f"user {name} ", "auth")][-2:] == [
        f"user {name} ({user['id']}) updated: displayName by {name}",
        f"user {name} ({user['id']}) updated: preferences by {name}",
    ]


def test_api_tokens_of_any_user_are_logged_without_the_token(home):
    user, api = home.new_user("standard")
    created = api.post("/me/tokens", {"name": "script"}).json()
    kept = api.post("/me/tokens", {"name": "kept"}).json()
    assert api.delete(f"/me/tokens/{created['id']}").status_code == 204
    name = user["username"]
    assert one_line(home, f"API token {created['id']} (script)", "auth") == f"API token {created['id']} (script) of user {user['id']} created by {name}"
    assert one_line(home, f"API token {created['id']} of", "auth") == f"API token {created['id']} of user {user['id']} deleted by {name}"

    assert home.admin.delete(f"/users/{user['id']}").status_code == 204
    assert one_line(home, "of deleted user " + user["id"], "auth") == f"1 API token(s) of deleted user {user['id']} revoked"
    entries = home.admin.get("/logs", params={"limit": 2000}).json()["entries"]
    assert not any(token in entry["msg"] for token in (created["token"], kept["token"]) for entry in entries)


def test_an_integration_started_stopped_or_restarted_by_an_administrator_is_logged(home):
    assert home.admin.put("/settings", {SIM + "enabled": True, SIM + "rooms": 1, SIM + "message_rate": 0}).status_code == 200
    wait_for(lambda: logged(home, "settings of simulator changed", "integration-registry"))
    try:
        for action in ("stop", "start", "restart"):
            response = home.admin.post(f"/integrations/simulator/{action}")
            assert response.status_code == 200, response.text
            status = response.json()["status"]
            past = {"stop": "stopped", "start": "started", "restart": "restarted"}[action]
            assert logged(home, f"integration simulator {past} by admin: now {status}", "integration-registry"), action
    finally:
        assert home.admin.put("/settings", {SIM + "enabled": False}).status_code == 200


def test_refused_changes_log_nothing(home):
    assert home.admin.post("/integrations/zigbee2mqtt/restart").status_code == 400  # not configured
    assert home.admin.post("/integrations/nope/stop").status_code == 404
    assert home.admin.put("/settings", {"bad key!": 1}).status_code == 400
    assert not logged(home, "integration zigbee2mqtt restarted", "integration-registry")
    assert not logged(home, "integration nope", "integration-registry")
    assert not logged(home, "bad key", "settings")
