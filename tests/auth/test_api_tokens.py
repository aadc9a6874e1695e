"""Own API tokens: creation (shown once), listing, use as a bearer, expiry, deletion, and no escalation."""

import re
import time
from datetime import datetime, timedelta, timezone

from tests.harness import PASSWORD

INVALID_API_TOKEN = {"error": "Invalid API token"}


def iso_in(seconds):
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_create_returns_the_token_once_and_the_list_never_shows_it(home):
    user, api = home.new_user("standard")
    response = api.post("/me/tokens", {"name": "Home Assistant"})
    assert response.status_code == 201, response.text
    created = response.json()
    token = created["token"]
    assert token.startswith("hbx_") and re.fullmatch(r"hbx_[0-9a-f]{64}", token)
    assert created["name"] == "Home Assistant" and created["id"] and created["expiresAt"] is None

    listed = api.get("/me/tokens")
    assert listed.status_code == 200
    assert token not in listed.text and token[4:] not in listed.text
    entries = listed.json()
    assert [entry["name"] for entry in entries] == ["Home Assistant"]
    assert entries[0]["id"] == created["id"]
    assert "token" not in entries[0]
    # Another user's list does not show it either.
    assert created["id"] not in home.admin.get("/me/tokens").text


def test_each_token_is_distinct(home):
    _, api = home.new_user("standard")
    first = api.post("/me/tokens", {"name": "a"}).json()
    second = api.post("/me/tokens", {"name": "a"}).json()
    assert first["token"] != second["token"] and first["id"] != second["id"]
    assert len(api.get("/me/tokens").json()) == 2


def test_token_works_as_a_bearer(home):
    user, api = home.new_user("standard")
    token = api.post("/me/tokens", {"name": "script"}).json()["token"]
    response = home.server.api(token).get("/me")
    assert response.status_code == 200 and response.json()["id"] == user["id"]
    # Allowed own-account writes work with it too.
    assert home.server.api(token).put("/me", {"displayName": "Via Token"}).json()["displayName"] == "Via Token"


def test_create_validation(home):
    _, api = home.new_user("standard")
    past = api.post("/me/tokens", {"name": "old", "expiresAt": iso_in(-60)})
    assert past.status_code == 400 and past.json() == {"error": "expiresAt must be in the future"}
    garbage = api.post("/me/tokens", {"name": "bad", "expiresAt": "next tuesday"})
    assert garbage.status_code == 400 and garbage.json() == {"error": "expiresAt must be an ISO 8601 date-time"}
    nameless = api.post("/me/tokens", {})
    assert nameless.status_code == 400 and nameless.json() == {"error": "name is required"}
    blank = api.post("/me/tokens", {"name": "   "})
    assert blank.status_code == 400 and blank.json() == {"error": "name must not be empty"}
    assert api.get("/me/tokens").json() == []


def test_token_with_an_expiry_works_until_then(home):
    _, api = home.new_user("standard")
    expires_at = iso_in(2)
    created = api.post("/me/tokens", {"name": "brief", "expiresAt": expires_at})
    assert created.status_code == 201, created.text
    assert created.json()["expiresAt"] == expires_at
    token_api = home.server.api(created.json()["token"])
    assert token_api.get("/me").status_code == 200

    time.sleep(2.5)
    expired = token_api.get("/me")
    assert expired.status_code == 401 and expired.json() == INVALID_API_TOKEN


def test_delete_own_token(home):
    _, api = home.new_user("standard")
    kept = api.post("/me/tokens", {"name": "kept"}).json()
    doomed = api.post("/me/tokens", {"name": "doomed"}).json()
    assert home.server.api(doomed["token"]).get("/me").status_code == 200

    response = api.delete(f"/me/tokens/{doomed['id']}")
    assert response.status_code == 204 and response.content == b""
    after = home.server.api(doomed["token"]).get("/me")
    assert after.status_code == 401 and after.json() == INVALID_API_TOKEN
    assert [entry["id"] for entry in api.get("/me/tokens").json()] == [kept["id"]]
    assert home.server.api(kept["token"]).get("/me").status_code == 200
    assert api.delete(f"/me/tokens/{doomed['id']}").status_code == 404


def test_a_token_can_delete_itself(home):
    _, api = home.new_user("standard")
    created = api.post("/me/tokens", {"name": "self"}).json()
    token_api = home.server.api(created["token"])
    assert token_api.delete(f"/me/tokens/{created['id']}").status_code == 204
    assert token_api.get("/me").status_code == 401


def test_deleting_another_users_token_is_404(home):
    _, owner = home.new_user("standard")
    _, other = home.new_user("standard")
    created = owner.post("/me/tokens", {"name": "mine"}).json()
    for intruder in (other, home.admin):
        response = intruder.delete(f"/me/tokens/{created['id']}")
        assert response.status_code == 404 and response.json() == {"error": "API token not found"}
    assert home.server.api(created["token"]).get("/me").status_code == 200
    assert [entry["id"] for entry in owner.get("/me/tokens").json()] == [created["id"]]


def test_a_standard_users_token_has_no_admin_rights(home):
    _, api = home.new_user("standard")
    token_api = home.server.api(api.post("/me/tokens", {"name": "limited"}).json()["token"])
    for method, path, body in (
        ("GET", "/users", None),
        ("GET", "/settings", None),
        ("GET", "/logs", None),
        ("POST", "/users", {"username": "escalated", "password": PASSWORD, "role": "admin"}),
        ("PUT", "/settings", {"auth.accessTokenTtlSeconds": 99999}),
    ):
        response = token_api.request(method, path, body)
        assert response.status_code == 403 and response.json() == {"error": "Admin access required"}, (method, path)
    assert token_api.get("/me").json()["role"] == "standard"


def test_an_admins_token_carries_admin_rights(home):
    token = home.admin.post("/me/tokens", {"name": "admin-script"}).json()["token"]
    response = home.server.api(token).get("/users")
    assert response.status_code == 200 and "admin" in {u["username"] for u in response.json()}
