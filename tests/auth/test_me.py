"""The caller's own account: profile, display name, preferences and password change."""

from tests.harness import PASSWORD

NEW_PASSWORD = "battery-staple-77"


def login(home, username, password=PASSWORD):
    return home.server.api().post("/auth/login", {"username": username, "password": password})


def test_get_me_is_the_callers_profile(home):
    user, api = home.new_user("standard")
    response = api.get("/me")
    assert response.status_code == 200
    me = response.json()
    assert me["id"] == user["id"] and me["username"] == user["username"]
    assert me["role"] == "standard" and me["enabled"] is True
    assert isinstance(me["preferences"], dict) and "displayName" in me
    assert not any("password" in key.lower() for key in me)
    assert home.admin.get("/me").json()["username"] == "admin"


def test_put_me_updates_the_display_name_only(home):
    user, api = home.new_user("standard")
    response = api.put("/me", {"displayName": "Kitchen Tablet", "role": "admin", "username": "hijack"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["displayName"] == "Kitchen Tablet"
    assert body["role"] == "standard" and body["username"] == user["username"]
    assert api.get("/me").json()["displayName"] == "Kitchen Tablet"

    missing = api.put("/me", {})
    assert missing.status_code == 400 and missing.json() == {"error": "displayName is required"}
    assert api.put("/me", {"displayName": 5}).status_code == 400


def test_preferences_are_replaced_as_a_whole(home):
    _, api = home.new_user("standard")
    first = {"language": "fr", "theme": "dark", "dashboard": {"columns": 3, "pinned": ["a", "b"]}}
    response = api.put("/me/preferences", {"preferences": first})
    assert response.status_code == 200, response.text
    assert response.json()["preferences"] == first
    assert api.get("/me").json()["preferences"] == first

    replaced = api.put("/me/preferences", {"preferences": {"theme": "light"}})
    assert replaced.status_code == 200
    # Nothing of the first object survives; only the language default is filled in.
    assert replaced.json()["preferences"] == {"language": "en", "theme": "light"}
    assert api.get("/me").json()["preferences"] == {"language": "en", "theme": "light"}

    for bad in ({}, {"preferences": "dark"}, {"preferences": ["x"]}, {"preferences": None}):
        response = api.put("/me/preferences", bad)
        assert response.status_code == 400, bad
        assert "preferences" in response.json()["error"], bad


def test_password_change_with_a_wrong_current_password_is_401(home):
    user, api = home.new_user("standard")
    response = api.put("/me/password", {"currentPassword": "not-my-password", "newPassword": NEW_PASSWORD})
    assert response.status_code == 401 and response.json() == {"error": "Current password is incorrect"}
    assert api.get("/me").status_code == 200  # the caller's session survives a wrong guess
    assert login(home, user["username"]).status_code == 200
    assert login(home, user["username"], NEW_PASSWORD).status_code == 401


def test_password_change_enforces_the_policy_on_the_new_password(home):
    user, api = home.new_user("standard")
    response = api.put("/me/password", {"currentPassword": PASSWORD, "newPassword": "short"})
    assert response.status_code == 400 and response.json() == {"error": "newPassword must be at least 8 characters"}
    missing = api.put("/me/password", {"currentPassword": PASSWORD})
    assert missing.status_code == 400 and missing.json() == {"error": "newPassword is required"}
    assert login(home, user["username"]).status_code == 200


def test_password_change_ends_the_other_sessions_and_keeps_this_one(home):
    user, api = home.new_user("standard")
    username = user["username"]
    here = login(home, username).json()
    elsewhere = login(home, username).json()
    changer = home.server.api(here["accessToken"])

    response = changer.put("/me/password", {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD})
    assert response.status_code == 200, response.text

    # Other sessions (the login from new_user and the second login) are over.
    assert api.get("/me").status_code == 401
    assert home.server.api(elsewhere["accessToken"]).get("/me").status_code == 401
    stale = home.server.api().post("/auth/refresh", {"refreshToken": elsewhere["refreshToken"]})
    assert stale.status_code == 401

    # The session that made the change keeps working, including its refresh token.
    assert changer.get("/me").status_code == 200
    kept = home.server.api().post("/auth/refresh", {"refreshToken": here["refreshToken"]})
    assert kept.status_code == 200, kept.text
    assert home.server.api(kept.json()["accessToken"]).get("/me").status_code == 200

    old = login(home, username)
    assert old.status_code == 401 and old.json() == {"error": "Invalid credentials"}
    assert login(home, username, NEW_PASSWORD).status_code == 200


def test_standard_user_may_use_all_own_account_writes(home):
    _, api = home.new_user("standard")
    assert api.put("/me", {"displayName": "Std"}).status_code == 200
    assert api.put("/me/preferences", {"preferences": {"theme": "dark"}}).status_code == 200
    assert api.put("/me/password", {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}).status_code == 200
