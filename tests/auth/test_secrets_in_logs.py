"""Secrets never reach the logs: neither the in-memory ring (GET /logs) nor the daily files."""

import json

from tests.harness import PASSWORD

USER_PASSWORD = "log-user-password-31"
NEW_PASSWORD = "log-new-password-62"
WRONG_PASSWORD = "log-wrong-password-93"
SETTING_SECRET = "log-setting-secret-47"


def test_no_password_or_token_in_any_log(home):
    api = home.server.api()
    secrets = [PASSWORD, USER_PASSWORD, NEW_PASSWORD, WRONG_PASSWORD, SETTING_SECRET]

    user, user_api = home.new_user("standard", password=USER_PASSWORD)
    pairs = [home.admin_pair, home.login("admin"), home.login(user["username"], USER_PASSWORD)]
    pairs.append(api.post("/auth/refresh", {"refreshToken": pairs[-1]["refreshToken"]}).json())
    tokens = [
        user_api.post("/me/tokens", {"name": "logs"}).json()["token"],
        home.admin.post("/me/tokens", {"name": "logs-admin"}).json()["token"],
    ]
    changer = home.server.api(pairs[-1]["accessToken"])
    assert changer.put("/me/password", {"currentPassword": USER_PASSWORD, "newPassword": NEW_PASSWORD}).status_code == 200
    assert changer.put("/me/password", {"currentPassword": WRONG_PASSWORD, "newPassword": NEW_PASSWORD}).status_code == 401
    assert api.post("/auth/login", {"username": user["username"], "password": WRONG_PASSWORD}).status_code == 401
    assert api.post("/auth/login", {"username": WRONG_PASSWORD, "password": WRONG_PASSWORD}).status_code == 401
    assert api.post("/auth/login", {"username": user["username"], "password": NEW_PASSWORD}).status_code == 200
    # Rejected credentials are logged nowhere either.
    assert home.server.api(tokens[0] + "0").get("/me").status_code == 401
    assert api.post("/auth/refresh", {"refreshToken": pairs[1]["refreshToken"] + "0"}).status_code == 401
    assert api.post("/auth/logout", {"refreshToken": pairs[1]["refreshToken"]}).status_code == 204
    # Administrative changes are logged, a secret setting by its key only.
    assert home.admin.put("/settings", {"integration.zigbee2mqtt.mqtt_password": SETTING_SECRET}).status_code == 200
    assert home.admin.put("/settings", {"integration.zigbee2mqtt.mqtt_password": None}).status_code == 200
    # A WebSocket carries its credential in the query string.
    for credential in (pairs[0]["accessToken"], pairs[1]["accessToken"], tokens[1]):
        home.server.ws(credential).close()

    for pair in pairs:
        secrets += [pair["accessToken"], pair["refreshToken"]]
    secrets += tokens + [token[4:] for token in tokens]

    logs = home.admin.get("/logs", params={"limit": 2000})
    assert logs.status_code == 200, logs.text
    entries = logs.json()["entries"]
    assert entries, "the ring buffer is empty: nothing was checked"
    ring_text = json.dumps(entries)
    assert any("password changed" in entry["msg"] for entry in entries)
    assert any(f"user {user['username']} ({user['id']}) created" in entry["msg"] for entry in entries)
    assert any("integration.zigbee2mqtt.mqtt_password set (secret, not shown)" in entry["msg"] for entry in entries)

    files = sorted(path for path in (home.server.data_dir / "logs").rglob("*") if path.is_file())
    assert files, "no log file written"
    file_text = "".join(path.read_text(errors="replace") for path in files)
    assert "login refused" in file_text

    for secret in secrets:
        assert secret not in ring_text, "a secret is in the log ring buffer"
        assert secret not in file_text, "a secret is in a log file"
