"""Bearer credential handling: header forms, forged or expired JWTs, and the configurable access-token lifetime."""

import time

import jwt

from tests.harness import PASSWORD

AUTH_REQUIRED = {"error": "Authentication required"}


def test_missing_header_is_401_authentication_required(home):
    response = home.server.api().get("/me")
    assert response.status_code == 401 and response.json() == AUTH_REQUIRED
    # Writes are refused the same way, before the body is looked at.
    assert home.server.api().put("/me", {"displayName": "x"}).json() == AUTH_REQUIRED


def test_malformed_headers_are_401(home):
    access = home.admin_pair["accessToken"]
    for header in ("Basic x", "Basic " + access, "Bearer", "Bearer    ", access, "Token " + access):
        response = home.server.api().get("/me", headers={"Authorization": header})
        assert response.status_code == 401, (header, response.text)
        assert response.json() == AUTH_REQUIRED, header


def test_scheme_is_case_insensitive(home):
    access = home.admin_pair["accessToken"]
    assert home.server.api().get("/me", headers={"Authorization": "bearer " + access}).status_code == 200


def test_garbage_and_forged_jwts_are_401(home):
    invalid = {"error": "Invalid or expired token"}
    claims = jwt.decode(home.admin_pair["accessToken"], options={"verify_signature": False})
    forged = [
        "not-a-jwt",
        "a.b.c",
        home.admin_pair["accessToken"][:-4] + "AAAA",  # tampered signature
        jwt.encode(claims, "not-the-server-key-but-long-enough-for-hs256", algorithm="HS256"),
        jwt.encode({**claims, "role": "admin"}, "", algorithm="none"),
        jwt.encode({**claims, "exp": int(time.time()) - 10}, "not-the-server-key-but-long-enough-for-hs256", algorithm="HS256"),
    ]
    for token in forged:
        response = home.server.api(token).get("/me")
        assert response.status_code == 401, (token, response.text)
        assert response.json() == invalid, token


def test_a_refresh_token_is_not_a_bearer_credential(home):
    pair = home.login("admin")
    assert home.server.api(pair["refreshToken"]).get("/me").status_code == 401


def test_unknown_api_token_is_401(home):
    response = home.server.api("hbx_" + "0" * 64).get("/me")
    assert response.status_code == 401 and response.json() == {"error": "Invalid API token"}


def test_health_never_answers_401_even_with_a_bad_credential(home):
    response = home.server.api("garbage").get("/health")
    assert response.status_code == 200 and "version" not in response.json()


def test_access_token_lifetime_is_a_setting(make_server):
    server = make_server()
    anonymous = server.api()
    admin = server.api(anonymous.post("/auth/setup", {"username": "admin", "password": PASSWORD, "displayName": "Admin"}).json()["accessToken"])
    response = admin.put("/settings", {"auth.accessTokenTtlSeconds": 1})
    assert response.status_code == 200, response.text

    pair = anonymous.post("/auth/login", {"username": "admin", "password": PASSWORD}).json()
    claims = jwt.decode(pair["accessToken"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] <= 2  # 1 s, rounded to whole seconds
    short = server.api(pair["accessToken"])
    assert short.get("/me").status_code == 200  # valid for at least the configured second

    time.sleep(2.5)
    expired = short.get("/me")
    assert expired.status_code == 401 and expired.json() == {"error": "Invalid or expired token"}
    # The session itself lives on: the refresh token still yields a fresh (short) access token.
    renewed = anonymous.post("/auth/refresh", {"refreshToken": pair["refreshToken"]})
    assert renewed.status_code == 200, renewed.text
    assert server.api(renewed.json()["accessToken"]).get("/me").status_code == 200

    # Back to the default: new tokens last long again.
    assert admin.put("/settings", {"auth.accessTokenTtlSeconds": None}).status_code == 200
    default = anonymous.post("/auth/login", {"username": "admin", "password": PASSWORD}).json()
    claims = jwt.decode(default["accessToken"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] >= 15 * 60
