"""Login, refresh-token rotation (with reuse detection) and logout."""


from tests.harness import PASSWORD

INVALID_CREDENTIALS = {"error": "Invalid credentials"}
INVALID_REFRESH = {"error": "Invalid refresh token"}


def refresh(home, token):
    return home.server.api().post("/auth/refresh", {"refreshToken": token})


def me_status(home, access_token):
    return home.server.api(access_token).get("/me").status_code


def test_login_returns_a_token_pair_and_the_user(home):
    response = home.server.api().post("/auth/login", {"username": "admin", "password": PASSWORD})
    assert response.status_code == 200, response.text
    body = response.json()
    assert {"accessToken", "refreshToken", "user"} <= set(body)
    assert isinstance(body["accessToken"], str) and body["accessToken"]
    assert isinstance(body["refreshToken"], str) and body["refreshToken"]
    assert body["accessToken"] != body["refreshToken"]
    user = body["user"]
    assert user["username"] == "admin" and user["role"] == "admin" and user["enabled"] is True
    assert not any("password" in key.lower() for key in user)
    assert home.server.api(body["accessToken"]).get("/me").json()["username"] == "admin"


def test_each_login_is_its_own_session(home):
    first, second = home.login("admin"), home.login("admin")
    assert first["accessToken"] != second["accessToken"]
    assert first["refreshToken"] != second["refreshToken"]


def test_wrong_password_and_unknown_user_get_the_same_401(home):
    api = home.server.api()
    wrong = api.post("/auth/login", {"username": "admin", "password": PASSWORD + "x"})
    assert wrong.status_code == 401 and wrong.json() == INVALID_CREDENTIALS
    unknown = api.post("/auth/login", {"username": "nobody-here", "password": PASSWORD})
    assert unknown.status_code == 401 and unknown.json() == INVALID_CREDENTIALS


def test_login_body_is_validated(home):
    api = home.server.api()
    missing = api.post("/auth/login", {"username": "admin"})
    assert missing.status_code == 400 and missing.json() == {"error": "password is required"}
    assert api.post("/auth/login", {"username": "admin", "password": 42}).status_code == 400


def test_refresh_rotates_the_pair_and_the_old_refresh_token_is_refused(home):
    first = home.login("admin")
    rotated = refresh(home, first["refreshToken"])
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert {"accessToken", "refreshToken"} <= set(second)
    assert second["refreshToken"] != first["refreshToken"]
    assert me_status(home, second["accessToken"]) == 200

    # The new refresh token rotates in turn.
    third = refresh(home, second["refreshToken"])
    assert third.status_code == 200, third.text
    assert me_status(home, third.json()["accessToken"]) == 200

    # The old one is spent.
    stale = refresh(home, first["refreshToken"])
    assert stale.status_code == 401 and stale.json() == INVALID_REFRESH


def test_presenting_a_rotated_refresh_token_ends_the_whole_session(home):
    first = home.login("admin")
    other_session = home.login("admin")
    second = refresh(home, first["refreshToken"]).json()
    assert me_status(home, second["accessToken"]) == 200

    replay = refresh(home, first["refreshToken"])
    assert replay.status_code == 401 and replay.json() == INVALID_REFRESH

    # The thief's replay burned the session: the latest pair is dead too.
    latest = refresh(home, second["refreshToken"])
    assert latest.status_code == 401 and latest.json() == INVALID_REFRESH
    assert me_status(home, second["accessToken"]) == 401
    assert me_status(home, first["accessToken"]) == 401
    # Other sessions of the same user are not affected.
    assert me_status(home, other_session["accessToken"]) == 200
    assert refresh(home, other_session["refreshToken"]).status_code == 200


def test_replaying_an_older_generation_refresh_token_also_ends_the_session(home):
    first = home.login("admin")
    second = refresh(home, first["refreshToken"]).json()
    third = refresh(home, second["refreshToken"]).json()
    assert refresh(home, first["refreshToken"]).status_code == 401
    assert me_status(home, third["accessToken"]) == 401


def test_garbage_refresh_tokens_are_refused(home):
    api = home.server.api()
    assert api.post("/auth/refresh", {"refreshToken": "0" * 64}).json() == INVALID_REFRESH
    assert api.post("/auth/refresh", {"refreshToken": "0" * 64}).status_code == 401
    # An access token is not a refresh token.
    access = home.login("admin")["accessToken"]
    assert api.post("/auth/refresh", {"refreshToken": access}).status_code == 401
    assert api.post("/auth/refresh", {}).status_code == 400


def test_logout_ends_only_that_session(home):
    pair = home.login("admin")
    other = home.login("admin")
    out = home.server.api().post("/auth/logout", {"refreshToken": pair["refreshToken"]})
    assert out.status_code == 204 and out.content == b""

    after = refresh(home, pair["refreshToken"])
    assert after.status_code == 401 and after.json() == INVALID_REFRESH
    assert me_status(home, pair["accessToken"]) == 401
    assert me_status(home, other["accessToken"]) == 200
    assert refresh(home, other["refreshToken"]).status_code == 200


def test_logout_with_the_sessions_own_bearer_also_works(home):
    pair = home.login("admin")
    out = home.server.api(pair["accessToken"]).post("/auth/logout", {"refreshToken": pair["refreshToken"]})
    assert out.status_code == 204
    assert me_status(home, pair["accessToken"]) == 401
