"""What the audit trail records of each mutating request, in process on a ManualClock."""

from __future__ import annotations

import json
import sqlite3

import pytest

from hausbox.audit.entry import outcome_of
from hausbox.core.clock import iso_utc
from tests.audit.helpers import START, entries, user_token, written
from tests.harness import PASSWORD
from tests.inprocess import local_ms

SECRET = "Zq7-distinctive-s3cret-Wv"  # sent as every password, code and token below
ANONYMOUS = "no-such-token"  # an invalid bearer: the request is anonymous


@pytest.fixture
def home(make_house):
    house = make_house(start=START, services=["audit"])  # not the whole engine: see helpers.py
    house.token()  # the administrator, set up in process: not a request
    return house


def _one(home, **expected) -> dict:
    found = [e for e in entries(home) if all(e[k] == v for k, v in expected.items())]
    assert len(found) == 1, (expected, entries(home))
    return found[0]


def test_each_mutating_request_is_recorded_with_its_pattern_target_and_outcome(home):
    admin = home.engine.auth.users.list()[0]
    status, _, body = home.api("POST", "/zones", {"name": "Salon"})
    assert status == 201
    zone = json.loads(body)["id"]
    assert home.api("PUT", f"/zones/{zone}", {"name": "Séjour"})[0] == 200
    assert home.api("PUT", f"/zones/{zone}", {"name": 12})[0] == 400
    assert home.api("DELETE", "/zones/nope")[0] == 404
    assert home.api("DELETE", f"/zones/{zone}")[0] == 204
    assert home.api("GET", "/zones")[0] == 200  # a read: not recorded
    written(home)
    got = [(e["method"], e["route"], e["action"], e["target"], e["outcome"], e["status"]) for e in reversed(entries(home))]
    assert got == [
        ("POST", "/zones", "POST /zones", None, "success", 201),
        ("PUT", "/zones/<id>", "PUT /zones/*", {"id": zone}, "success", 200),
        ("PUT", "/zones/<id>", "PUT /zones/*", {"id": zone}, "failure", 400),
        ("DELETE", "/zones/<id>", "DELETE /zones/*", {"id": "nope"}, "failure", 404),
        ("DELETE", "/zones/<id>", "DELETE /zones/*", {"id": zone}, "success", 204),
    ]
    first = entries(home)[-1]
    assert first["ts"] == local_ms(START) and first["time"] == iso_utc(local_ms(START))
    assert (first["userId"], first["username"], first["role"], first["credential"]) == (admin["id"], "admin", "admin", "jwt")
    assert first["address"] == "127.0.0.1" and isinstance(first["id"], int)


def test_a_request_with_two_path_parameters_names_both(home):
    mode = home.mode("Nuit")
    assert home.api("POST", f"/modes/{mode}/apply-to-zone/nowhere")[0] == 404
    written(home)
    entry = _one(home, action="POST /modes/*/apply-to-zone/*")
    assert entry["target"] == {"id": mode, "zoneId": "nowhere"} and entry["route"] == "/modes/<id>/apply-to-zone/<zoneId>"


def test_refused_requests_are_recorded_with_who_tried(home):
    user_id, token = user_token(home, "bob")
    assert home.api("POST", "/zones", {"name": "Bob's"}, token=token)[0] == 403  # the write barrier
    assert home.api("POST", "/zones", {"name": "x"}, token=ANONYMOUS)[0] == 401
    assert home.api("PUT", "/me", {"displayName": 5}, token=token)[0] == 400  # allowed, bad body
    written(home)
    denied = _one(home, status=403)
    assert (denied["userId"], denied["username"], denied["role"], denied["outcome"]) == (user_id, "bob", "standard", "denied")
    anonymous = _one(home, status=401)
    assert (anonymous["userId"], anonymous["username"], anonymous["credential"], anonymous["outcome"]) == (None, None, None, "denied")
    bad = _one(home, status=400)
    assert (bad["username"], bad["action"], bad["outcome"]) == ("bob", "PUT /me", "failure")


def test_an_api_token_is_named_as_such(home):
    status, _, body = home.api("POST", "/me/tokens", {"name": "script"})
    token = json.loads(body)["token"]
    assert home.api("POST", "/zones", {"name": "Garage"}, token=token)[0] == 201
    written(home)
    assert _one(home, action="POST /zones")["credential"] == "api_token"


def test_a_path_that_matches_no_route_is_recorded_without_it(home):
    assert home.api("POST", "/no/such/thing")[0] == 404
    assert home.api("PATCH", "/zones")[0] == 405  # the path exists, not with this method
    written(home)
    unmatched = [e for e in entries(home) if e["route"] is None]
    assert [(e["method"], e["action"], e["target"], e["status"], e["outcome"]) for e in unmatched] == [
        ("PATCH", None, None, 405, "failure"),
        ("POST", None, None, 404, "failure"),
    ]


def test_sign_in_attempts_name_the_tried_account_and_nothing_else(home):
    user_token(home, "carol")
    assert home.api("POST", "/auth/login", {"username": "carol", "password": SECRET}, token=ANONYMOUS)[0] == 401
    assert home.api("POST", "/auth/login", {"username": "carol", "password": PASSWORD}, token=ANONYMOUS)[0] == 200
    assert home.api("POST", "/auth/login", {"username": "nobody", "password": SECRET}, token=ANONYMOUS)[0] == 401
    written(home)
    logins = [(e["username"], e["outcome"], e["status"], e["credential"]) for e in reversed(entries(home, action="POST /auth/login"))]
    assert logins == [("carol", "failure", 401, None), ("carol", "success", 200, None), ("nobody", "failure", 401, None)]


def test_rate_limited_sign_ins_are_recorded(make_house):
    home = make_house(start=START, services=["audit"], login_rate_per_minute=2)
    for _ in range(3):
        home.api("POST", "/auth/login", {"username": "dave", "password": SECRET}, token=ANONYMOUS)
    written(home)
    outcomes = [e["outcome"] for e in reversed(entries(home, action="POST /auth/login"))]
    assert outcomes == ["failure", "failure", "rate_limited"]


def test_the_mfa_challenge_and_the_other_outcomes_come_from_status_and_shape():
    assert outcome_of(200, "/auth/login", {"mfaRequired": True, "challengeToken": "t"}, True) == "mfa_required"
    assert outcome_of(200, "/auth/mfa/verify", {"accessToken": "a"}, True) == "success"
    assert outcome_of(401, "/auth/mfa/verify", None, True) == "failure"  # a wrong code
    assert outcome_of(401, "/me/password", None, True) == "failure"  # a wrong current password
    assert outcome_of(401, "/me/password", None, False) == "denied"  # no valid credential
    assert outcome_of(200, "/users/<id>", {"mfaRequired": True}, True) == "success"  # only sign-in routes ask for MFA
    outcomes = [outcome_of(s, "/zones", None, True) for s in (204, 403, 409, 429, 500, 507)]
    assert outcomes == ["success", "denied", "failure", "rate_limited", "error", "error"]


def test_no_body_value_or_secret_is_ever_recorded(home):
    _, token = user_token(home, "erin")
    home.api("POST", "/auth/login", {"username": "erin", "password": SECRET}, token=ANONYMOUS)
    home.api("PUT", "/me/password", {"currentPassword": SECRET, "newPassword": SECRET + "2"}, token=token)
    home.api("POST", "/users", {"username": "frank", "password": SECRET, "displayName": "Frank", "role": "standard"})
    home.api("POST", "/auth/refresh", {"refreshToken": SECRET}, token=ANONYMOUS)
    home.api("POST", "/auth/logout", {"refreshToken": SECRET}, token=ANONYMOUS)
    home.api("POST", "/zones", {"name": "zone-" + SECRET})
    home.api("PUT", "/settings", {"unknown.key": SECRET})
    written(home)
    found = entries(home)
    assert len(found) == 7
    assert SECRET not in json.dumps(found)
    home.stop()  # the database file as a whole: the audit table holds no body value either
    with sqlite3.connect(home.data_dir / "hausbox.db") as conn:
        rows = conn.execute("SELECT * FROM audit_entries").fetchall()
    assert len(rows) == 7 and SECRET not in repr(rows)


def test_an_entry_is_written_by_the_worker_after_the_batch_delay(home):
    assert home.api("POST", "/zones", {"name": "Cave"})[0] == 201
    home.settle()
    assert entries(home) == []  # buffered: the request wrote nothing to the audit table
    home.advance(0.5)
    assert entries(home) == []
    written(home)
    assert len(entries(home)) == 1


def test_what_is_buffered_at_shutdown_is_written(home):
    assert home.api("POST", "/zones", {"name": "Grenier"})[0] == 201
    home.restart()  # no time passed: only the final write can have stored it
    assert [e["action"] for e in entries(home)] == ["POST /zones"]
