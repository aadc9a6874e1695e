"""system/routes over HTTP: the log API, the runtime log level, and the settings store."""

from __future__ import annotations

import pytest

from hausbox.core.logs import LEVELS

ADMIN_REQUIRED = {"error": "Admin access required"}


def login_refused_once(home) -> None:
    """Make the server write one info line (``auth: login refused: unknown user``)."""
    response = home.server.api().post("/auth/login", {"username": "nobody-here", "password": "whatever-123"})
    assert response.status_code == 401


def log_file(home):
    return home.server.data_dir / "logs" / "hausbox.log"


@pytest.fixture
def restore_level(home):
    yield
    assert home.admin.put("/logs/level", {"level": "debug"}).status_code == 200


# ---- GET /logs -----------------------------------------------------------------------------------


def test_logs_returns_entries_capacity_level_and_modules(home):
    login_refused_once(home)
    response = home.admin.get("/logs")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"entries", "capacity", "currentLevel", "modules"}
    assert body["capacity"] == 2000
    assert body["currentLevel"] == "debug"  # the ring buffer's default, whatever LOG_LEVEL says
    assert body["total"] == len(body["entries"])
    assert 0 < len(body["entries"]) <= 100
    for entry in body["entries"]:
        assert set(entry) == {"level", "module", "msg", "time"}
        assert entry["level"] in LEVELS and entry["time"].endswith("Z")
    assert {"engine", "server", "auth"} <= set(body["modules"])
    assert body["modules"] == sorted(body["modules"])
    messages = [e["msg"] for e in home.admin.get("/logs", params={"limit": 2000}).json()["entries"]]
    assert any(m.startswith("hausbox ") and " started" in m for m in messages)
    assert any("login refused: unknown user" in m for m in messages)
    # oldest first
    times = [e["time"] for e in body["entries"]]
    assert times == sorted(times)


def test_logs_filters(home):
    login_refused_once(home)
    login_refused_once(home)
    admin = home.admin

    by_search = admin.get("/logs", params={"search": "LOGIN REFUSED"}).json()["entries"]
    assert len(by_search) >= 2
    assert all("login refused" in e["msg"].lower() for e in by_search)

    by_module = admin.get("/logs", params={"module": "auth"}).json()["entries"]
    assert by_module and all(e["module"] == "auth" for e in by_module)
    assert admin.get("/logs", params={"module": "aut"}).json()["entries"] == []

    by_level = admin.get("/logs", params={"level": "warn"}).json()["entries"]
    assert all(LEVELS[e["level"]] >= LEVELS["warn"] for e in by_level)
    assert not any("login refused" in e["msg"] for e in by_level)  # those are info
    info_and_up = admin.get("/logs", params={"level": "info", "search": "login refused"}).json()["entries"]
    assert len(info_and_up) == len(by_search)

    limited = admin.get("/logs", params={"limit": 1}).json()
    assert len(limited["entries"]) == 1 and limited["total"] == 1
    newest = admin.get("/logs", params={"limit": 2000}).json()["entries"][-1]
    assert limited["entries"][0] == newest

    since = admin.get("/logs", params={"since": newest["time"], "limit": 2000}).json()["entries"]
    assert since and since[-1] == newest and all(e["time"] >= newest["time"] for e in since)
    future = admin.get("/logs", params={"since": "2999-01-01T00:00:00Z"}).json()
    assert future["entries"] == [] and future["total"] == 0
    past = admin.get("/logs", params={"since": "2000-01-01T00:00:00.000+00:00"}).json()["entries"]
    assert len(past) == len(admin.get("/logs").json()["entries"])


def test_logs_limit_is_clamped(home):
    many = home.admin.get("/logs", params={"limit": 100000})
    assert many.status_code == 200
    assert len(many.json()["entries"]) <= 2000
    assert len(home.admin.get("/logs", params={"limit": 0}).json()["entries"]) == 1


@pytest.mark.parametrize(
    "params, word",
    [
        ({"level": "verbose"}, "level"),
        ({"level": "WARN"}, "level"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-13-45T99:00:00Z"}, "since"),
        ({"limit": "ten"}, "limit"),
    ],
)
def test_logs_bad_query_is_a_json_400(home, params, word):
    response = home.admin.get("/logs", params=params)
    assert response.status_code == 400, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and word in body["error"]


# ---- runtime level -------------------------------------------------------------------------------


def test_get_and_put_log_level(home, restore_level):
    admin = home.admin
    assert admin.get("/logs/level").json() == {"level": "debug"}
    changed = admin.put("/logs/level", {"level": "warn"})
    assert changed.status_code == 200, changed.text
    assert changed.json() == {"level": "warn", "previous": "debug"}
    assert admin.get("/logs/level").json() == {"level": "warn"}
    assert admin.get("/logs").json()["currentLevel"] == "warn"
    for level in LEVELS:
        assert admin.put("/logs/level", {"level": level}).json()["level"] == level
    assert admin.get("/logs/level").json() == {"level": "silent"}


@pytest.mark.parametrize("body", [{"level": "verbose"}, {"level": "INFO"}, {"level": 3}, {"level": None}, {}])
def test_put_log_level_refuses_an_unknown_level(home, body):
    before = home.admin.get("/logs/level").json()
    response = home.admin.put("/logs/level", body)
    assert response.status_code == 400, response.text
    assert "level" in response.json()["error"]
    assert home.admin.get("/logs/level").json() == before


def test_runtime_level_changes_the_ring_buffer_only_not_the_file(home, restore_level):
    def ring_count():
        entries = home.admin.get("/logs", params={"search": "login refused", "limit": 2000}).json()["entries"]
        return len(entries)

    def file_count():
        return log_file(home).read_text().count("login refused: unknown user")

    login_refused_once(home)
    ring_before, file_before = ring_count(), file_count()
    assert ring_before >= 1 and file_before >= 1  # info lines reach both at first (LOG_LEVEL=info)

    assert home.admin.put("/logs/level", {"level": "error"}).status_code == 200
    login_refused_once(home)
    login_refused_once(home)
    assert ring_count() == ring_before  # the ring buffer no longer takes info
    assert file_count() == file_before + 2  # the daily file still does
    assert home.admin.get("/logs").json()["currentLevel"] == "error"
    assert " INFO  auth: login refused: unknown user" in log_file(home).read_text()

    assert home.admin.put("/logs/level", {"level": "info"}).status_code == 200
    login_refused_once(home)
    assert ring_count() == ring_before + 1
    assert file_count() == file_before + 3


# ---- settings ------------------------------------------------------------------------------------


def test_get_and_put_settings(home):
    admin = home.admin
    response = admin.put("/settings", {"test.routes.name": "Maison", "test.routes.count": 3, "test.routes.on": True, "test.routes.ratio": 0.5})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "success": True,
        "changed": ["test.routes.count", "test.routes.name", "test.routes.on", "test.routes.ratio"],
    }
    stored = admin.get("/settings")
    assert stored.status_code == 200
    values = stored.json()
    assert values["test.routes.name"] == "Maison" and values["test.routes.count"] == 3
    assert values["test.routes.on"] is True and values["test.routes.ratio"] == 0.5

    again = admin.put("/settings", {"test.routes.name": "Maison", "test.routes.count": 3})
    assert again.json() == {"success": True, "changed": []}
    as_int = admin.put("/settings", {"test.routes.on": 1})
    assert as_int.json()["changed"] == ["test.routes.on"]
    assert admin.get("/settings").json()["test.routes.on"] == 1


def test_null_deletes_a_setting(home):
    admin = home.admin
    admin.put("/settings", {"test.delete.me": "x", "test.delete.keep": "y"})
    response = admin.put("/settings", {"test.delete.me": None, "test.delete.never": None})
    assert response.status_code == 200
    assert response.json()["changed"] == ["test.delete.me"]
    values = admin.get("/settings").json()
    assert "test.delete.me" not in values and values["test.delete.keep"] == "y"


@pytest.mark.parametrize("value", [{"nested": 1}, [1, 2], []])
def test_a_non_scalar_value_is_refused_naming_the_key(home, value):
    response = home.admin.put("/settings", {"test.bad.ok": "fine", "test.bad.value": value})
    assert response.status_code == 400, response.text
    assert "test.bad.value" in response.json()["error"]
    values = home.admin.get("/settings").json()
    assert "test.bad.ok" not in values and "test.bad.value" not in values  # nothing was written


@pytest.mark.parametrize("key", ["bad key", "semi;colon", "slash/key", "ünïcode", "", "k" * 201])
def test_a_bad_key_is_refused(home, key):
    response = home.admin.put("/settings", {"test.badkey.ok": 1, key: 1})
    assert response.status_code == 400, response.text
    assert set(response.json()) == {"error"}
    assert "test.badkey.ok" not in home.admin.get("/settings").json()


@pytest.mark.parametrize("raw", ['["a", "b"]', '"text"', "42", "{not json", "null"])
def test_a_body_that_is_not_an_object_is_refused(home, raw):
    response = home.admin.put("/settings", data=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert "error" in response.json()


def test_allowed_key_characters(home):
    key = "Integration_1.zigbee-2:mqtt.base_topic"
    response = home.admin.put("/settings", {key: "z2m"})
    assert response.status_code == 200 and response.json()["changed"] == [key]
    assert home.admin.put("/settings", {key: None}).json()["changed"] == [key]


# ---- access --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("GET", "/logs", None),
        ("GET", "/logs/level", None),
        ("PUT", "/logs/level", {"level": "silent"}),
        ("PUT", "/logs/level", {"level": "nonsense"}),  # the admin check comes before validation
        ("GET", "/settings", None),
        ("PUT", "/settings", {"test.std": 1}),
        ("PUT", "/settings", {"bad key": [1]}),
    ],
)
def test_a_standard_user_gets_403(home, method, path, body):
    _, standard = home.new_user("standard")
    response = standard.request(method, path, body)
    assert response.status_code == 403, response.text
    assert response.json() == ADMIN_REQUIRED
    assert home.admin.get("/logs/level").json() == {"level": "debug"}
    assert "test.std" not in home.admin.get("/settings").json()


@pytest.mark.parametrize("method, path", [("GET", "/logs"), ("GET", "/logs/level"), ("GET", "/settings"), ("PUT", "/settings")])
def test_no_credential_gets_401(home, method, path):
    response = home.server.api().request(method, path, {} if method == "PUT" else None)
    assert response.status_code == 401
    assert set(response.json()) == {"error"}
