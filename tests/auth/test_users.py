"""User administration: list, create, update, delete, the self and last-admin guards, and revocation."""

import itertools

from tests.harness import PASSWORD

ADMIN_REQUIRED = {"error": "Admin access required"}
_names = itertools.count(1)


def unique(prefix="user"):
    return f"{prefix}-{next(_names)}"


def create(home, role="standard", username=None, password=PASSWORD, **extra):
    username = username or unique(role)
    response = home.admin.post("/users", {"username": username, "password": password, "displayName": username, "role": role, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def login(home, username, password=PASSWORD):
    return home.server.api().post("/auth/login", {"username": username, "password": password})


def admin_id(home):
    return home.admin.get("/me").json()["id"]


def test_create_then_list_and_fields(home):
    username = unique("Carol")
    response = home.admin.post("/users", {"username": username, "password": PASSWORD, "displayName": "Carol C", "role": "standard"})
    assert response.status_code == 201, response.text
    user = response.json()
    assert user["username"] == username and user["displayName"] == "Carol C"
    assert user["role"] == "standard" and user["enabled"] is True and user["id"]
    assert not any("password" in key.lower() for key in user)

    listed = home.admin.get("/users")
    assert listed.status_code == 200
    users = listed.json()
    assert [u for u in users if u["id"] == user["id"]] == [user]
    assert {"admin", username} <= {u["username"] for u in users}
    assert not any("password" in key.lower() for u in users for key in u)
    assert PASSWORD not in listed.text and "$2b$" not in listed.text


def test_display_name_and_role_are_required_and_a_refusal_creates_nothing(home):
    username = unique()
    full = {"username": username, "password": PASSWORD, "displayName": "Dee", "role": "standard"}
    for body, message in (
        ({**full, "displayName": None}, "displayName must be a string"),
        ({**full, "displayName": ["Dee"]}, "displayName must be a string"),
        ({key: value for key, value in full.items() if key != "displayName"}, "displayName is required"),
        ({key: value for key, value in full.items() if key != "role"}, "role is required"),
    ):
        response = home.admin.post("/users", body)
        assert (response.status_code, response.json()) == (400, {"error": message})
        assert username not in {u["username"] for u in home.admin.get("/users").json()}
        assert login(home, username).status_code == 401


def test_a_blank_display_name_falls_back_to_the_username(home):
    username = unique()
    response = home.admin.post("/users", {"username": username, "password": PASSWORD, "displayName": "  ", "role": "standard"})
    assert response.status_code == 201 and response.json()["displayName"] == username


def test_duplicate_username_is_409_case_insensitively(home):
    username = unique("Dup")
    create(home, username=username)
    for variant in (username, username.upper(), username.lower()):
        response = home.admin.post("/users", {"username": variant, "password": PASSWORD, "displayName": "Dup", "role": "standard"})
        assert response.status_code == 409, variant
        assert response.json() == {"error": "Username already exists"}


def test_login_is_case_insensitive_on_username(home):
    username = unique("Mixed")
    create(home, username=username)
    assert login(home, username.upper()).status_code == 200


def test_create_validation(home):
    bad_role = home.admin.post("/users", {"username": unique(), "password": PASSWORD, "displayName": "R", "role": "root"})
    assert bad_role.status_code == 400 and bad_role.json() == {"error": "role must be one of admin, standard"}

    short = home.admin.post("/users", {"username": unique(), "password": "short", "displayName": "S", "role": "standard"})
    assert short.status_code == 400 and short.json() == {"error": "password must be at least 8 characters"}

    no_password = home.admin.post("/users", {"username": unique()})
    assert no_password.status_code == 400 and no_password.json() == {"error": "password is required"}

    bad_name = home.admin.post("/users", {"username": "has space", "password": PASSWORD, "displayName": "H", "role": "standard"})
    assert bad_name.status_code == 400 and "username" in bad_name.json()["error"]

    # Nothing was created by the refused requests.
    assert "root" not in {u["role"] for u in home.admin.get("/users").json()}


def test_update_display_name_role_and_enabled(home):
    user = create(home)
    response = home.admin.put(f"/users/{user['id']}", {"displayName": "Renamed"})
    assert response.status_code == 200 and response.json()["displayName"] == "Renamed"
    assert response.json()["role"] == "standard" and response.json()["enabled"] is True

    promoted = home.admin.put(f"/users/{user['id']}", {"role": "admin"}).json()
    assert promoted["role"] == "admin" and promoted["displayName"] == "Renamed"
    demoted = home.admin.put(f"/users/{user['id']}", {"role": "standard", "enabled": False}).json()
    assert demoted["role"] == "standard" and demoted["enabled"] is False

    listed = {u["id"]: u for u in home.admin.get("/users").json()}[user["id"]]
    assert (listed["displayName"], listed["role"], listed["enabled"]) == ("Renamed", "standard", False)

    bad = home.admin.put(f"/users/{user['id']}", {"role": "owner"})
    assert bad.status_code == 400 and bad.json() == {"error": "role must be one of admin, standard"}
    assert home.admin.put(f"/users/{user['id']}", {"enabled": "no"}).status_code == 400
    assert home.admin.put("/users/no-such-user", {"displayName": "x"}).status_code == 404


def test_delete_user_ends_their_credentials(home):
    user = create(home)
    access = login(home, user["username"]).json()["accessToken"]
    token = home.server.api(access).post("/me/tokens", {"name": "t"}).json()["token"]

    response = home.admin.delete(f"/users/{user['id']}")
    assert response.status_code == 204 and response.content == b""
    assert user["id"] not in {u["id"] for u in home.admin.get("/users").json()}
    assert home.server.api(access).get("/me").status_code == 401
    assert home.server.api(token).get("/me").status_code == 401
    assert login(home, user["username"]).status_code == 401
    assert home.admin.delete(f"/users/{user['id']}").status_code == 404


def test_nobody_deletes_themself(home):
    response = home.admin.delete(f"/users/{admin_id(home)}")
    assert response.status_code == 400 and response.json() == {"error": "Cannot delete your own account"}

    _, second_admin = home.new_user("admin")
    own = second_admin.get("/me").json()["id"]
    response = second_admin.delete(f"/users/{own}")
    assert response.status_code == 400 and response.json() == {"error": "Cannot delete your own account"}
    assert home.admin.delete(f"/users/{own}").status_code == 204


def test_last_enabled_admin_cannot_be_demoted_or_disabled_until_a_second_admin_exists(home):
    me = admin_id(home)
    last_admin = {"error": "Cannot remove the last admin: it cannot be demoted or disabled"}
    for change in ({"role": "standard"}, {"enabled": False}, {"role": "standard", "enabled": False}):
        response = home.admin.put(f"/users/{me}", change)
        assert response.status_code == 400 and response.json() == last_admin, change
    assert home.admin.get("/me").json()["role"] == "admin"

    # With a second enabled admin, the first may step down, and be promoted back by the second.
    _, second = home.new_user("admin")
    second_id = second.get("/me").json()["id"]
    stepped_down = home.admin.put(f"/users/{me}", {"role": "standard"})
    assert stepped_down.status_code == 200 and stepped_down.json()["role"] == "standard"
    assert home.admin.get("/users").status_code == 403
    # The second admin is now the last one: it cannot be disabled by anyone.
    response = second.put(f"/users/{second_id}", {"enabled": False})
    assert response.status_code == 400 and response.json() == last_admin
    assert second.put(f"/users/{me}", {"role": "admin"}).status_code == 200
    assert home.admin.get("/users").status_code == 200

    # A disabled admin does not count: disabling the second leaves the first as the last one again.
    assert home.admin.put(f"/users/{second_id}", {"enabled": False}).json()["enabled"] is False
    response = home.admin.put(f"/users/{me}", {"role": "standard"})
    assert response.status_code == 400 and response.json() == last_admin
    # A disabled admin may be deleted (it is not the last enabled admin).
    assert home.admin.delete(f"/users/{second_id}").status_code == 204


def test_a_second_admin_can_be_demoted_and_disabled(home):
    user, _ = home.new_user("admin")
    assert home.admin.put(f"/users/{user['id']}", {"enabled": False}).status_code == 200
    assert home.admin.put(f"/users/{user['id']}", {"enabled": True, "role": "standard"}).status_code == 200
    assert home.admin.delete(f"/users/{user['id']}").status_code == 204


def test_disabled_user_cannot_log_in_and_their_credentials_stop_at_once(home):
    user = create(home)
    pair = login(home, user["username"]).json()
    api = home.server.api(pair["accessToken"])
    token = api.post("/me/tokens", {"name": "script"}).json()["token"]
    assert home.server.api(token).get("/me").status_code == 200

    assert home.admin.put(f"/users/{user['id']}", {"enabled": False}).status_code == 200

    # The right password and a wrong one get the same answer: nobody learns a disabled account's password.
    for password in (PASSWORD, PASSWORD + "x"):
        refused = login(home, user["username"], password)
        assert refused.status_code == 401 and refused.json() == {"error": "Invalid credentials"}, password
    assert api.get("/me").status_code == 401
    assert home.server.api(token).get("/me").status_code == 401
    # Its refresh token answers as any unknown one.
    for refresh_token in (pair["refreshToken"], "0" * 64):
        refused = home.server.api().post("/auth/refresh", {"refreshToken": refresh_token})
        assert refused.status_code == 401 and refused.json() == {"error": "Invalid refresh token"}

    # Re-enabled: they can log in again, but the sessions ended by disabling stay ended.
    assert home.admin.put(f"/users/{user['id']}", {"enabled": True}).status_code == 200
    assert login(home, user["username"]).status_code == 200
    assert api.get("/me").status_code == 401
    assert home.server.api().post("/auth/refresh", {"refreshToken": pair["refreshToken"]}).status_code == 401


def test_a_demoted_admin_loses_admin_routes_at_once(home):
    user, api = home.new_user("admin")
    token = api.post("/me/tokens", {"name": "admin-script"}).json()["token"]
    assert api.get("/users").status_code == 200
    assert home.server.api(token).get("/users").status_code == 200

    assert home.admin.put(f"/users/{user['id']}", {"role": "standard"}).status_code == 200
    for client in (api, home.server.api(token)):
        response = client.get("/users")
        assert response.status_code == 403 and response.json() == ADMIN_REQUIRED
        response = client.post("/users", {"username": unique(), "password": PASSWORD})
        assert response.status_code == 403 and response.json() == ADMIN_REQUIRED
        me = client.get("/me")
        assert me.status_code == 200 and me.json()["role"] == "standard"


def test_standard_user_cannot_administer_users(home):
    user, api = home.new_user("standard")
    for method, path, body in (
        ("GET", "/users", None),
        ("POST", "/users", {"username": unique(), "password": PASSWORD, "role": "admin"}),
        ("PUT", f"/users/{user['id']}", {"role": "admin"}),
        ("PUT", f"/users/{user['id']}", {"role": 12}),  # admin check before validation
        ("DELETE", f"/users/{admin_id(home)}", None),
    ):
        response = api.request(method, path, body)
        assert response.status_code == 403 and response.json() == ADMIN_REQUIRED, (method, path)
    assert api.get("/me").json()["role"] == "standard"
