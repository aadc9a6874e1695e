from tests.harness import PASSWORD


def test_fresh_server_requires_setup_then_refuses_a_second_setup(make_server):
    api = make_server().api()
    assert api.get("/auth/status").json() == {"setupRequired": True}
    first = api.post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner", "language": "fr"})
    assert first.status_code == 201
    body = first.json()
    assert set(body) >= {"accessToken", "refreshToken", "user"}
    assert body["user"]["role"] == "admin" and body["user"]["preferences"]["language"] == "fr"
    assert api.get("/auth/status").json() == {"setupRequired": False}
    again = api.post("/auth/setup", {"username": "intruder", "password": PASSWORD})
    assert again.status_code == 403 and again.json() == {"error": "Setup already completed"}
