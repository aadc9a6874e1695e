"""Guessing a password is limited like login on every route that checks one: every attempt counts
(malformed ones too), per source address and per account, and a 429 says when to retry."""

from typing import Any

from requests.adapters import HTTPAdapter

from tests.harness import PASSWORD

RATE = "10"
WRONG = "wrong-password-0"


class FromAddress(HTTPAdapter):
    """Connections from another loopback source address (127.0.0.2, ...)."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def api_from(server, address: str, token: str | None = None):
    api = server.api(token)
    api.session.mount("http://", FromAddress(address))
    return api


def limited_server(make_server):
    """A server at the spec's login rate with its first admin; ``(server, setup pair)``: setup is not counted."""
    server = make_server(env={"HAUSBOX_LOGIN_RATE": RATE})
    pair = server.api().post("/auth/setup", {"username": "admin", "password": PASSWORD, "displayName": "Admin"}).json()
    return server, pair


def assert_limited(response) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    retry = response.headers.get("Retry-After")
    assert retry is not None and retry.isdigit(), response.headers
    assert 1 <= int(retry) <= 60 and int(retry) == body["retryAfterSeconds"]


def test_malformed_login_bodies_count(make_server):
    server, _ = limited_server(make_server)
    api = server.api()
    malformed = [b"{not json", b"[]", b"{}", b'{"username": 5, "password": "x"}', b'{"username": "admin"}']
    for attempt in range(10):
        response = api.request("POST", "/auth/login", data=malformed[attempt % len(malformed)], headers={"Content-Type": "application/json"})
        assert response.status_code == 400, response.text
    assert_limited(api.post("/auth/login", {"username": "admin", "password": PASSWORD}))
    assert_limited(api.request("POST", "/auth/login", data=b"{not json"))


def test_one_account_is_limited_across_source_addresses(make_server):
    server, pair = limited_server(make_server)
    statuses = []
    for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        api = api_from(server, address)
        for username in ("admin", "ADMIN", " Admin", "admin"):  # one account, however it is spelled
            statuses.append(api.post("/auth/login", {"username": username, "password": WRONG}).status_code)
    assert statuses == [401] * 10 + [429] * 2, statuses

    # The right password from a fresh address is held too: the account is what is guessed at.
    assert_limited(api_from(server, "127.0.0.5").post("/auth/login", {"username": "admin", "password": PASSWORD}))
    # Another account is not.
    created = server.api(pair["accessToken"]).post(
        "/users", {"username": "bob", "password": PASSWORD, "displayName": "Bob", "role": "standard"}
    )
    assert created.status_code == 201, created.text
    assert api_from(server, "127.0.0.6").post("/auth/login", {"username": "bob", "password": PASSWORD}).status_code == 200


def test_retry_after_is_sent_with_every_429(make_server):
    server, _ = limited_server(make_server)
    api = api_from(server, "127.0.0.7")
    for _ in range(10):
        assert api.post("/auth/login", {"username": "nobody", "password": WRONG}).status_code == 401
    first = api.post("/auth/login", {"username": "nobody", "password": WRONG})
    assert_limited(first)
    later = api.post("/auth/login", {"username": "someone-else", "password": WRONG})  # the address is limited
    assert_limited(later)
    assert int(later.headers["Retry-After"]) <= int(first.headers["Retry-After"])


def test_password_change_is_limited_like_login(make_server):
    server, pair = limited_server(make_server)
    me = server.api(pair["accessToken"])
    for attempt in range(10):
        body = {"currentPassword": f"{WRONG}{attempt}", "newPassword": "new-password-42"} if attempt % 2 else {"currentPassword": 5}
        assert me.put("/me/password", body).status_code in (400, 401)
    assert_limited(me.put("/me/password", {"currentPassword": PASSWORD, "newPassword": "new-password-42"}))
    # The account's budget is shared with login, from any address; the password did not change.
    assert_limited(api_from(server, "127.0.0.8").post("/auth/login", {"username": "admin", "password": PASSWORD}))
    # Other routes are not limited: the session goes on.
    assert me.get("/me").status_code == 200
    assert me.put("/me", {"displayName": "Admin A"}).status_code == 200
