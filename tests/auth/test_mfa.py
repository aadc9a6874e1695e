"""Multi-factor authentication over HTTP: TOTP setup and confirmation, the login challenge and its
verify step (codes, backup codes, trusted devices), its limits, disabling, the admin reset, and the
secret kept out of every response and log. Codes are computed with pyotp, as an authenticator app."""

import json
import sqlite3
import time

import pyotp

from tests.harness import PASSWORD, Home

INVALID_CODE = {"error": "Invalid code"}
DEAD_CHALLENGE = {"error": "Invalid or expired challenge: sign in again"}


def code(secret, steps=0, at=None):
    """The code an authenticator shows now (or at ``at`` seconds), ``steps`` periods later."""
    return pyotp.TOTP(secret).at((time.time() if at is None else at) + steps * 30)


def wrong_code(secret):
    """A well-formed code that no step of the window accepts."""
    valid = {code(secret, steps) for steps in range(-2, 3)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in valid)


def enable_mfa(home):
    """A new standard user with MFA on: ``(user, their Api, secret, backup codes)``. The confirming
    code spent the current step: the next login needs ``code(secret, 1)``."""
    user, api = home.new_user("standard")
    secret = api.post("/me/mfa/totp/setup").json()["secret"]
    confirmed = api.post("/me/mfa/totp/confirm", {"code": code(secret)})
    assert confirmed.status_code == 200, confirmed.text
    return user, api, secret, confirmed.json()["backupCodes"]


def challenge_for(home, username):
    response = home.server.api().post("/auth/login", {"username": username, "password": PASSWORD})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mfaRequired"] is True and "accessToken" not in body and "refreshToken" not in body
    return body["challenge"]


def verify(home, challenge, **answer):
    return home.server.api().post("/auth/mfa/verify", {"challenge": challenge, **answer})


def test_setup_confirm_then_login_answers_a_challenge_completed_by_a_code(home):
    user, api = home.new_user("standard")
    assert api.get("/me/mfa").json() == {"enabled": False, "pendingSetup": False, "enabledAt": None, "backupCodesLeft": 0, "trustedDevices": []}

    setup = api.post("/me/mfa/totp/setup")
    assert setup.status_code == 200, setup.text
    body = setup.json()
    secret = body["secret"]
    assert len(secret) == 32 and pyotp.TOTP(secret).now().isdigit()
    assert body["otpauthUri"] == pyotp.TOTP(secret).provisioning_uri(name=user["username"], issuer_name="hausbox")
    assert body["qrSvg"].startswith("<svg") and body["qrSvg"].rstrip().endswith("</svg>")
    assert (body["issuer"], body["accountName"], body["digits"], body["period"]) == ("hausbox", user["username"], 6, 30)

    # Pending is not active: login still answers tokens.
    status = api.get("/me/mfa").json()
    assert status["pendingSetup"] is True and status["enabled"] is False
    assert "accessToken" in home.login(user["username"])

    wrong = api.post("/me/mfa/totp/confirm", {"code": wrong_code(secret)})
    assert wrong.status_code == 400 and wrong.json() == INVALID_CODE
    assert api.get("/me/mfa").json()["enabled"] is False

    confirmed = api.post("/me/mfa/totp/confirm", {"code": code(secret)})
    assert confirmed.status_code == 200, confirmed.text
    backup_codes = confirmed.json()["backupCodes"]
    assert confirmed.json()["enabled"] is True and len(set(backup_codes)) == 10
    status = api.get("/me/mfa").json()
    assert status["enabled"] is True and status["pendingSetup"] is False and status["backupCodesLeft"] == 10 and status["enabledAt"]

    login = home.server.api().post("/auth/login", {"username": user["username"], "password": PASSWORD}).json()
    assert set(login) == {"mfaRequired", "challenge", "methods", "expiresAt"}
    assert login["methods"] == ["totp", "backupCode", "trustedDevice"]

    # The confirming code's step is spent: the next one is needed.
    again = verify(home, login["challenge"], code=code(secret))
    assert again.status_code == 401 and again.json() == INVALID_CODE
    done = verify(home, login["challenge"], code=code(secret, 1))
    assert done.status_code == 200, done.text
    pair = done.json()
    assert {"accessToken", "refreshToken", "user"} <= set(pair) and "trustedDeviceToken" not in pair
    assert home.server.api(pair["accessToken"]).get("/me").json()["username"] == user["username"]

    # The challenge was used; the same code is not accepted twice, even in a new challenge.
    assert verify(home, login["challenge"], code=code(secret, 1)).json() == DEAD_CHALLENGE
    replay = verify(home, challenge_for(home, user["username"]), code=code(secret, 1))
    assert replay.status_code == 401 and replay.json() == INVALID_CODE


def test_a_backup_code_works_once(home):
    user, api, secret, backup_codes = enable_mfa(home)
    first = verify(home, challenge_for(home, user["username"]), backupCode=backup_codes[0].upper())
    assert first.status_code == 200, first.text
    assert api.get("/me/mfa").json()["backupCodesLeft"] == 9
    reused = verify(home, challenge_for(home, user["username"]), backupCode=backup_codes[0])
    assert reused.status_code == 401 and reused.json() == INVALID_CODE
    assert verify(home, challenge_for(home, user["username"]), backupCode=backup_codes[1].replace("-", "")).status_code == 200


def test_regenerated_backup_codes_replace_the_old_ones(home):
    user, api, secret, old_codes = enable_mfa(home)
    refused = api.post("/me/mfa/backup-codes/regenerate", {"code": wrong_code(secret)})
    assert refused.status_code == 400 and refused.json() == INVALID_CODE
    regenerated = api.post("/me/mfa/backup-codes/regenerate", {"code": code(secret, 1)})
    assert regenerated.status_code == 200, regenerated.text
    new_codes = regenerated.json()["backupCodes"]
    assert len(new_codes) == 10 and not set(new_codes) & set(old_codes)
    assert verify(home, challenge_for(home, user["username"]), backupCode=old_codes[0]).status_code == 401
    assert verify(home, challenge_for(home, user["username"]), backupCode=new_codes[0]).status_code == 200


def test_a_trusted_device_token_stands_in_for_a_code_until_revoked(home):
    user, api, secret, _ = enable_mfa(home)
    trusted = verify(home, challenge_for(home, user["username"]), code=code(secret, 1), trustDevice=True, deviceName="Kitchen tablet")
    assert trusted.status_code == 200, trusted.text
    token, device = trusted.json()["trustedDeviceToken"], trusted.json()["trustedDevice"]
    listed = api.get("/me/mfa").json()["trustedDevices"]
    assert [d["name"] for d in listed] == ["Kitchen tablet"] and listed[0]["id"] == device["id"]
    assert set(listed[0]) == {"id", "name", "createdAt", "lastUsedAt", "expiresAt"} and listed[0]["expiresAt"] > listed[0]["createdAt"]
    assert token not in json.dumps(listed)

    skipped = verify(home, challenge_for(home, user["username"]), trustedDeviceToken=token)
    assert skipped.status_code == 200, skipped.text
    assert "trustedDeviceToken" not in skipped.json()
    assert api.get("/me/mfa").json()["trustedDevices"][0]["lastUsedAt"] is not None

    # Another user can neither use nor revoke it.
    other, other_api, _, _ = enable_mfa(home)
    assert verify(home, challenge_for(home, other["username"]), trustedDeviceToken=token).status_code == 401
    assert other_api.delete(f"/me/mfa/trusted-devices/{device['id']}").status_code == 404

    assert api.delete(f"/me/mfa/trusted-devices/{device['id']}").status_code == 204
    assert api.get("/me/mfa").json()["trustedDevices"] == []
    revoked = verify(home, challenge_for(home, user["username"]), trustedDeviceToken=token)
    assert revoked.status_code == 401 and revoked.json() == INVALID_CODE
    missing = api.delete(f"/me/mfa/trusted-devices/{device['id']}")
    assert missing.status_code == 404 and missing.json()["error"]


def test_five_wrong_answers_end_the_challenge(home):
    user, _, secret, _ = enable_mfa(home)
    challenge = challenge_for(home, user["username"])
    for _ in range(4):
        refused = verify(home, challenge, code=wrong_code(secret))
        assert refused.status_code == 401 and refused.json() == INVALID_CODE
    last = verify(home, challenge, backupCode="aaaaa-aaaaa")
    assert last.status_code == 401 and last.json() == {"error": "Too many wrong codes: sign in again"}
    dead = verify(home, challenge, code=code(secret, 1))
    assert dead.status_code == 401 and dead.json() == DEAD_CHALLENGE
    # A new login starts a new challenge; the code was not spent by the dead one.
    assert verify(home, challenge_for(home, user["username"]), code=code(secret, 1)).status_code == 200


def test_verify_refuses_bad_input_with_400_and_unknown_challenges_with_401(home):
    user, _, secret, _ = enable_mfa(home)
    challenge = challenge_for(home, user["username"])
    cases = [
        ({"challenge": challenge}, "Exactly one of code, backupCode or trustedDeviceToken is required"),
        ({"challenge": challenge, "code": code(secret, 1), "backupCode": "aaaaa-aaaaa"}, "Exactly one of code, backupCode or trustedDeviceToken is required"),
        ({"challenge": challenge, "code": "12345"}, "code is not in the expected format"),
        ({"challenge": challenge, "code": 123456}, "code must be a string"),
        ({"code": code(secret, 1)}, "challenge is required"),
        ({"challenge": challenge, "trustDevice": "yes", "code": code(secret, 1)}, "trustDevice must be a boolean"),
    ]
    for body, error in cases:
        response = home.server.api().post("/auth/mfa/verify", body)
        assert response.status_code == 400 and response.json() == {"error": error}, body
    unknown = verify(home, "not-a-challenge", code=code(secret, 1))
    assert unknown.status_code == 401 and unknown.json() == DEAD_CHALLENGE
    # None of that cost the challenge anything.
    assert verify(home, challenge, code=code(secret, 1)).status_code == 200


def test_verify_is_rate_limited_as_login(make_server):
    server = make_server(env={"HAUSBOX_LOGIN_RATE": "4"})
    home = Home(server)
    user, api = home.new_user("standard")  # its login counts once for the address and the account
    secret = api.post("/me/mfa/totp/setup").json()["secret"]
    assert api.post("/me/mfa/totp/confirm", {"code": code(secret)}).status_code == 200  # 2
    challenge = challenge_for(home, user["username"])  # 3
    assert verify(home, challenge, code=wrong_code(secret)).status_code == 401  # 4
    limited = verify(home, challenge, code=code(secret, 1))
    assert limited.status_code == 429, limited.text
    assert 1 <= limited.json()["retryAfterSeconds"] <= 60 and int(limited.headers["Retry-After"]) >= 1


def test_pending_setup_can_be_cancelled_and_setup_twice_is_refused(home):
    user, api = home.new_user("standard")
    assert api.delete("/me/mfa/totp/setup").status_code == 404
    secret = api.post("/me/mfa/totp/setup").json()["secret"]
    assert api.delete("/me/mfa/totp/setup").status_code == 204
    assert api.get("/me/mfa").json()["pendingSetup"] is False
    no_setup = api.post("/me/mfa/totp/confirm", {"code": code(secret)})
    assert no_setup.status_code == 409 and no_setup.json()["error"]

    # A second setup replaces the first pending secret.
    first = api.post("/me/mfa/totp/setup").json()["secret"]
    second = api.post("/me/mfa/totp/setup").json()["secret"]
    assert first != second
    assert api.post("/me/mfa/totp/confirm", {"code": code(first)}).json() == INVALID_CODE
    assert api.post("/me/mfa/totp/confirm", {"code": code(second)}).status_code == 200
    again = api.post("/me/mfa/totp/setup")
    assert again.status_code == 409 and again.json()["error"]
    assert api.post("/me/mfa/totp/confirm", {"code": "12 34 56"}).status_code == 400


def test_disabling_needs_a_current_code_or_the_password_and_a_wrong_one_changes_nothing(home):
    user, api, secret, _ = enable_mfa(home)
    for body, status in (({}, 400), ({"code": wrong_code(secret)}, 400), ({"password": "not-the-password"}, 400),
                         ({"code": code(secret, 1), "password": PASSWORD}, 400)):  # fmt: skip
        refused = api.delete("/me/mfa/totp", json_body=body)
        assert refused.status_code == status and refused.json()["error"], body
    assert api.get("/me/mfa").json()["enabled"] is True
    assert api.get("/me/mfa").json()["backupCodesLeft"] == 10

    assert api.delete("/me/mfa/totp", json_body={"password": PASSWORD}).status_code == 204
    assert api.get("/me/mfa").json() == {"enabled": False, "pendingSetup": False, "enabledAt": None, "backupCodesLeft": 0, "trustedDevices": []}
    assert "accessToken" in home.login(user["username"])
    assert api.delete("/me/mfa/totp", json_body={"password": PASSWORD}).status_code == 404

    other, other_api, other_secret, _ = enable_mfa(home)
    assert other_api.delete("/me/mfa/totp", json_body={"code": code(other_secret, 1)}).status_code == 204
    assert "accessToken" in home.login(other["username"])


def test_an_admin_resets_a_users_mfa_and_a_standard_user_cannot(home):
    user, api, secret, _ = enable_mfa(home)
    _, other_api = home.new_user("standard")
    barred = other_api.delete(f"/users/{user['id']}/mfa")
    assert barred.status_code == 403 and barred.json() == {"error": "Admin access required"}
    assert other_api.get(f"/users/{user['id']}/mfa").status_code == 403

    seen = home.admin.get(f"/users/{user['id']}/mfa")
    assert seen.status_code == 200 and seen.json()["enabled"] is True and secret not in seen.text
    assert home.admin.delete("/users/00000000-0000-4000-8000-00000000dead/mfa").status_code == 404
    assert home.admin.get("/users/00000000-0000-4000-8000-00000000dead/mfa").status_code == 404

    challenge = challenge_for(home, user["username"])
    assert home.admin.delete(f"/users/{user['id']}/mfa").status_code == 204
    assert home.admin.get(f"/users/{user['id']}/mfa").json()["enabled"] is False
    # The pending challenge went with it; the next login answers tokens.
    assert verify(home, challenge, code=code(secret, 1)).json() == DEAD_CHALLENGE
    assert "accessToken" in home.login(user["username"])


def test_an_api_token_may_read_the_mfa_state_but_not_change_it(home):
    user, api, secret, _ = enable_mfa(home)
    token_api = home.server.api(api.post("/me/tokens", {"name": "mfa"}).json()["token"])
    assert token_api.get("/me/mfa").json()["enabled"] is True
    for method, path, body in (("POST", "/me/mfa/totp/setup", None), ("DELETE", "/me/mfa/totp", {"password": PASSWORD}),
                               ("POST", "/me/mfa/backup-codes/regenerate", {"code": code(secret, 1)})):  # fmt: skip
        refused = token_api.request(method, path, body)
        assert refused.status_code == 403 and "API token" in refused.json()["error"], path
    assert api.get("/me/mfa").json()["enabled"] is True and api.get("/me/mfa").json()["backupCodesLeft"] == 10


def table_rows(server, table, user_id):
    conn = sqlite3.connect(f"file:{server.data_dir / 'hausbox.db'}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(f"SELECT * FROM {table} WHERE user_id = ?", (user_id,)).fetchall()
    finally:
        conn.close()


def test_deleting_a_user_removes_their_mfa_rows(home):
    user, _, secret, _ = enable_mfa(home)
    assert verify(home, challenge_for(home, user["username"]), code=code(secret, 1), trustDevice=True).status_code == 200
    tables = ("user_mfa", "mfa_backup_codes", "mfa_trusted_devices")
    assert all(table_rows(home.server, table, user["id"]) for table in tables)
    assert home.admin.delete(f"/users/{user['id']}").status_code == 204
    assert not any(table_rows(home.server, table, user["id"]) for table in tables)


def test_the_secret_and_the_codes_appear_in_no_later_response_no_log_and_not_in_clear_at_rest(home):
    user, api, secret, backup_codes = enable_mfa(home)
    trusted = verify(home, challenge_for(home, user["username"]), code=code(secret, 1), trustDevice=True).json()["trustedDeviceToken"]
    assert verify(home, challenge_for(home, user["username"]), code=wrong_code(secret)).status_code == 401
    assert api.delete("/me/mfa/totp", json_body={"code": wrong_code(secret)}).status_code == 400

    reads = [api.get("/me"), api.get("/me/mfa"), home.admin.get("/users"), home.admin.get(f"/users/{user['id']}/mfa")]
    for response in reads:
        assert response.status_code == 200 and secret not in response.text and trusted not in response.text

    entries = home.admin.get("/logs", params={"limit": 2000}).json()["entries"]
    ring = json.dumps(entries)
    assert any(f"MFA enabled for user {user['id']}" in entry["msg"] for entry in entries)
    files = "".join(p.read_text(errors="replace") for p in (home.server.data_dir / "logs").rglob("*") if p.is_file())
    stored = [str(cell) for table in ("user_mfa", "mfa_backup_codes", "mfa_trusted_devices") for row in table_rows(home.server, table, user["id"]) for cell in row]
    for value in [secret, trusted, *backup_codes]:
        assert value not in ring and value not in files
    for value in [trusted, *backup_codes, *(c.replace("-", "") for c in backup_codes)]:
        assert not any(value in cell for cell in stored)


def test_a_challenge_expires_after_five_minutes_on_the_engine_clock(make_house):
    house = make_house(start="2026-06-15 08:00")
    admin = house.token()

    def call(method, path, body=None, token=admin):
        status, _, raw = house.api(method, path, body, token)
        return status, json.loads(raw) if raw else None

    def now_code(steps=0):
        return code(secret, steps, at=house.clock.now_ms() / 1000)

    secret = call("POST", "/me/mfa/totp/setup")[1]["secret"]
    assert call("POST", "/me/mfa/totp/confirm", {"code": now_code()})[0] == 200
    house.advance(60)  # past the confirming code's step
    status, login = call("POST", "/auth/login", {"username": "admin", "password": PASSWORD}, token="")
    assert status == 200 and login["mfaRequired"] is True
    house.advance(301)
    status, body = call("POST", "/auth/mfa/verify", {"challenge": login["challenge"], "code": now_code()}, token="")
    assert (status, body) == (401, DEAD_CHALLENGE)

    # Within the five minutes it works; a code of the engine's time, not the wall clock's.
    status, login = call("POST", "/auth/login", {"username": "admin", "password": PASSWORD}, token="")
    house.advance(240)
    status, body = call("POST", "/auth/mfa/verify", {"challenge": login["challenge"], "code": now_code()}, token="")
    assert status == 200 and body["accessToken"]
