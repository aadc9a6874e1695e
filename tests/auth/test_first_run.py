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
    again = api.post("/auth/setup", {"username": "intruder", "password": PASSWORD, "displayName": "Intruder"})
    assert again.status_code == 403 and again.json() == {"error": "Setup already completed"}


def test_setup_without_a_display_name_is_a_400_that_changes_nothing(make_server):
    api = make_server().api()
    for body, message in (
        ({"username": "owner", "password": PASSWORD}, "displayName is required"),
        ({"username": "owner", "password": PASSWORD, "displayName": None}, "displayName must be a string"),
        ({"username": "owner", "password": PASSWORD, "displayName": 7}, "displayName must be a string"),
    ):
        response = api.post("/auth/setup", body)
        assert (response.status_code, response.json()) == (400, {"error": message})
        assert api.get("/auth/status").json() == {"setupRequired": True}
    assert api.post("/auth/login", {"username": "owner", "password": PASSWORD}).status_code == 401
    assert api.post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"}).status_code == 201
