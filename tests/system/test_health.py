"""system/health: anonymous liveness, details for a valid credential, never a 401."""

from __future__ import annotations

import json
import time

import jwt
import pytest

from hausbox import __version__
from hausbox.system.health import Health, human_duration

ANONYMOUS_KEYS = {"status", "uptime"}
DETAILED_KEYS = {"status", "uptime", "integrations", "devices", "version"}


def health(home, headers=None):
    response = home.server.api().get("/health", headers=headers or {})
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    return response.json()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_anonymous(body):
    assert set(body) == ANONYMOUS_KEYS
    assert body["status"] == "ok"
    assert set(body["uptime"]) == {"ms", "human"}
    assert isinstance(body["uptime"]["ms"], int) and body["uptime"]["ms"] >= 0
    assert isinstance(body["uptime"]["human"], str) and body["uptime"]["human"]
    assert "version" not in json.dumps(body)


def assert_detailed(body):
    assert set(body) == DETAILED_KEYS
    assert body["status"] == "ok"
    assert set(body["uptime"]) == {"ms", "human"}
    assert body["version"] == __version__
    devices = body["devices"]
    assert set(devices) == {"total", "online", "offline", "unknown"}
    assert all(isinstance(n, int) and n >= 0 for n in devices.values())
    assert devices["total"] == devices["online"] + devices["offline"] + devices["unknown"]
    assert isinstance(body["integrations"], dict)
    for integration in body["integrations"].values():
        assert "status" in integration


def signing_key(home) -> str:
    return json.loads((home.server.data_dir / "secrets.json").read_text())["jwtSigningKey"]


def forged_access(home, key: str, exp_offset_s: int) -> str:
    """An access token like the admin's, signed with ``key``, expiring ``exp_offset_s`` from now."""
    claims = jwt.decode(home.admin_pair["accessToken"], options={"verify_signature": False})
    now = int(time.time())
    claims.update(iat=now - 3600, exp=now + exp_offset_s)
    return jwt.encode(claims, key, algorithm="HS256")


def test_anonymous_health_is_liveness_only(home):
    assert_anonymous(health(home))


def test_uptime_grows(home):
    first = health(home)["uptime"]["ms"]
    time.sleep(0.05)
    assert health(home)["uptime"]["ms"] >= first + 40


def test_a_jwt_adds_integrations_devices_and_version(home):
    assert_detailed(health(home, bearer(home.admin_pair["accessToken"])))


def test_a_standard_users_jwt_and_api_token_get_the_detailed_form(home):
    _, standard = home.new_user("standard")
    assert_detailed(health(home, bearer(standard.token)))
    created = standard.post("/me/tokens", {"name": "health probe"})
    assert created.status_code == 201, created.text
    token = created.json()["token"]
    assert token.startswith("hbx_")
    assert_detailed(health(home, bearer(token)))

    # Once deleted, the API token is no credential: anonymous again, still 200.
    assert standard.delete(f"/me/tokens/{created.json()['id']}").status_code == 204
    assert_anonymous(health(home, bearer(token)))


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer garbage",
        "Bearer ",
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
        "Bearer hbx_" + "0" * 64,
        "Bearer hbx_",
        "Basic YWRtaW46cGFzc3dvcmQ=",
        "garbage",
        "",
    ],
)
def test_a_bad_credential_falls_back_to_the_anonymous_form(home, authorization):
    assert_anonymous(health(home, {"Authorization": authorization}))


def test_an_expired_jwt_falls_back_to_the_anonymous_form(home):
    key = signing_key(home)
    # The forging is right: the same token with a future expiry is accepted...
    assert_detailed(health(home, bearer(forged_access(home, key, 600))))
    # ...and expired, it is only an anonymous probe, never a 401.
    assert_anonymous(health(home, bearer(forged_access(home, key, -60))))


def test_a_jwt_signed_with_another_key_falls_back_to_the_anonymous_form(home):
    assert_anonymous(health(home, bearer(forged_access(home, "another-key-" + "0" * 52, 600))))


def test_a_logged_out_sessions_access_token_falls_back_to_the_anonymous_form(home):
    user, _ = home.new_user("standard")
    pair = home.login(user["username"])
    assert_detailed(health(home, bearer(pair["accessToken"])))
    assert home.server.api().post("/auth/logout", {"refreshToken": pair["refreshToken"]}).status_code == 204
    assert_anonymous(health(home, bearer(pair["accessToken"])))


@pytest.mark.parametrize(
    "ms, text",
    [(0, "0s"), (999, "0s"), (59_000, "59s"), (61_000, "1m 1s"), (3_600_000, "1h 0m"), (3_725_000, "1h 2m"), (90_061_000, "1d 1h 1m")],
)
def test_human_duration(ms, text):
    assert human_duration(ms) == text


def test_contributors_extend_the_detailed_form_only():
    report = Health()
    report.add_contributor(lambda: {"integrations": {"simulator": {"status": "connected"}}})
    report.add_contributor(lambda: {"devices": {"total": 3, "online": 2, "offline": 1, "unknown": 0}})
    detailed = report.report(detailed=True)
    assert detailed["integrations"] == {"simulator": {"status": "connected"}}
    assert detailed["devices"] == {"total": 3, "online": 2, "offline": 1, "unknown": 0}
    assert detailed["version"] == __version__
    assert set(report.report(detailed=False)) == ANONYMOUS_KEYS
    plain = Health().report(detailed=True)
    assert plain["integrations"] == {} and plain["devices"] == {"total": 0, "online": 0, "offline": 0, "unknown": 0}
