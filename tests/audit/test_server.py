"""The audit trail of a real server over real HTTP: sign-ins, where from, nothing secret on disk,
and what is buffered at SIGTERM."""

from __future__ import annotations

import jsonschema

from hausbox.audit.entry import MAX_AGENT
from hausbox.audit.routes import PAGE
from tests.auth.test_mfa import challenge_for, code, enable_mfa, verify, wrong_code
from tests.harness import PASSWORD, Home, wait_for

SECRET = "Kp4-distinctive-pa55-Yx"


def _entries(home: Home, **params) -> list[dict]:
    response = home.admin.get("/audit", params={"limit": 500, **params})
    assert response.status_code == 200, response.text
    jsonschema.validate(response.json(), PAGE)  # the documented shape is the served one
    return response.json()["entries"]


def test_sign_ins_over_http_and_nothing_secret_on_disk(make_server):
    server = make_server()
    home = Home(server)
    user, api = home.new_user("standard", password=PASSWORD)
    anonymous = server.api()
    agent = "audit-test/" + "x" * 300
    assert anonymous.post("/auth/login", {"username": user["username"], "password": SECRET}, headers={"User-Agent": agent}).status_code == 401
    pair = home.login(user["username"])
    assert anonymous.post("/auth/refresh", {"refreshToken": SECRET}).status_code == 401
    assert api.put("/me/password", {"currentPassword": SECRET, "newPassword": SECRET + "!"}).status_code == 401
    assert api.post("/users", {"username": "x", "password": SECRET, "displayName": "X", "role": "admin"}).status_code == 403
    assert anonymous.post("/auth/logout", {"refreshToken": SECRET}).status_code == 204  # no such session: nobody named
    assert anonymous.post("/auth/logout", {"refreshToken": pair["refreshToken"]}).status_code == 204
    wait_for(lambda: len(_entries(home, user=user["username"])) >= 6)  # the batch delay, on the server's clock
    mine = list(reversed(_entries(home, user=user["username"])))
    assert [(e["action"], e["outcome"]) for e in mine] == [
        ("POST /auth/login", "success"),  # new_user's sign-in
        ("POST /auth/login", "failure"),
        ("POST /auth/login", "success"),
        ("PUT /me/password", "failure"),  # signed in, but the current password was wrong
        ("POST /users", "denied"),
        ("POST /auth/logout", "success"),  # the refresh token's session was theirs
    ]
    unnamed = [e for e in _entries(home) if e["action"] == "POST /auth/logout" and e["username"] is None]
    assert len(unnamed) == 1
    failed = mine[1]
    assert (failed["username"], failed["userId"], failed["status"], failed["address"]) == (user["username"], None, 401, "127.0.0.1")
    assert failed["userAgent"] == agent[:MAX_AGENT]
    everything = home.admin.get("/audit", params={"limit": 500}).text
    assert SECRET not in everything and pair["refreshToken"] not in everything and PASSWORD not in everything
    assert server.stop() == 0
    for name in ("hausbox.db", "hausbox.db-wal"):
        path = server.data_dir / name
        if path.exists():
            assert SECRET.encode() not in path.read_bytes(), name


def test_what_is_buffered_at_sigterm_is_on_disk_after_the_restart(make_server):
    server = make_server()
    home = Home(server)
    assert home.admin.post("/zones", {"name": "Atelier"}).status_code == 201
    assert server.stop() == 0  # within the batch delay
    server.start()
    home.admin = server.api(home.login("admin")["accessToken"])
    assert "POST /zones" in [e["action"] for e in _entries(home)]


def test_the_mfa_steps_are_recorded_under_the_tried_account(make_server):
    home = Home(make_server())
    user, _, secret, _ = enable_mfa(home)
    challenge = challenge_for(home, user["username"])
    wrong, right = wrong_code(secret), code(secret, 1)
    assert verify(home, challenge, code=wrong).status_code == 401
    assert verify(home, challenge, code=right).status_code == 200
    wait_for(lambda: len(_entries(home, user=user["username"])) >= 6)
    steps = [(e["action"], e["outcome"], e["credential"]) for e in reversed(_entries(home, user=user["username"]))]
    assert steps == [
        ("POST /auth/login", "success", None),
        ("POST /me/mfa/totp/setup", "success", "jwt"),
        ("POST /me/mfa/totp/confirm", "success", "jwt"),
        ("POST /auth/login", "mfa_required", None),
        ("POST /auth/mfa/verify", "failure", None),
        ("POST /auth/mfa/verify", "success", None),
    ]
    everything = home.admin.get("/audit", params={"limit": 500}).text
    assert challenge not in everything and secret not in everything
    assert f'"{right}"' not in everything and f'"{wrong}"' not in everything  # as values: digits also make up timestamps
