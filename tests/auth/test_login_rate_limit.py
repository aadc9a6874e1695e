"""Login is limited to 10 requests a minute per client."""

from tests.harness import PASSWORD


def test_the_eleventh_login_in_a_minute_is_429(make_server):
    server = make_server(env={"HAUSBOX_LOGIN_RATE": "10"})
    api = server.api()
    assert api.post("/auth/setup", {"username": "admin", "password": PASSWORD, "displayName": "Admin"}).status_code == 201  # not counted

    statuses, pair = [], None
    for attempt in range(10):
        password = PASSWORD if attempt % 2 else "wrong-password-0"
        response = api.post("/auth/login", {"username": "admin", "password": password})
        statuses.append(response.status_code)
        if response.status_code == 200:
            pair = response.json()
    assert statuses == [401, 200] * 5

    for password in (PASSWORD, "wrong-password-0"):
        limited = api.post("/auth/login", {"username": "admin", "password": password})
        assert limited.status_code == 429, limited.text
        body = limited.json()
        assert isinstance(body["error"], str) and body["error"]
        assert 1 <= body["retryAfterSeconds"] <= 60

    # Only login is limited: sessions already open go on, refresh included.
    assert server.api(pair["accessToken"]).get("/me").status_code == 200
    refreshed = api.post("/auth/refresh", {"refreshToken": pair["refreshToken"]})
    assert refreshed.status_code == 200, refreshed.text
    assert api.get("/auth/status").status_code == 200
