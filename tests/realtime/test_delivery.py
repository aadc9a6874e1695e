"""Delivery over a real socket: subscriptions, 200 ms JSON-array batches, the lone log stream, admin-only topics."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.harness import PASSWORD
from tests.wsclient import (
    Collector,
    expect_welcome,
    settings_events_with,
    subscribe,
)

_unique = itertools.count()


def fresh_key(prefix: str = "ws.test") -> str:
    return f"{prefix}.k{next(_unique)}_{time.monotonic_ns()}"


def put_settings(home, values: dict) -> float:
    """PUT the settings; returns when the request started (monotonic)."""
    started = time.monotonic()
    response = home.admin.put("/settings", values)
    assert response.status_code == 200, response.text
    return started


def refuse_a_login(home, marker: str) -> None:
    """A failed login logs "login refused" at info: a log.entry the API can trigger."""
    response = home.server.api().post("/auth/login", {"username": marker, "password": "wrong-" + PASSWORD})
    assert response.status_code == 401, response.text


@pytest.fixture
def open_socket(home):
    collectors: list[Collector] = []

    def open_(token: str) -> Collector:
        ws = home.server.ws(token)
        expect_welcome(ws)
        collector = Collector(ws)
        collectors.append(collector)
        return collector

    yield open_
    for collector in collectors:
        collector.close()


def test_settings_change_arrives_as_a_json_array_on_system_within_a_second(home, open_socket):
    client = open_socket(home.admin_pair["accessToken"])  # never subscribed: system is the default
    key = fresh_key()
    started = put_settings(home, {key: "on"})
    client.wait_for(lambda c: settings_events_with(c, key), timeout=2)
    arrived, message = next((at, m) for at, m in client.timed_messages() if isinstance(m, list) and any(key in e.get("keys", ()) for e in m))
    assert isinstance(message, list), f"a batched event must come in a JSON array, got {message!r}"
    assert {"type": "settings.changed", "keys": [key]} in message
    assert arrived - started < 1.0, f"event took {arrived - started:.3f} s"
    # Only keys whose value changed emit: the same value again sends nothing.
    mark = client.mark()
    put_settings(home, {key: "on"})
    time.sleep(0.6)
    assert not any(key in e.get("keys", ()) for m in client.messages_since(mark) for e in (m if isinstance(m, list) else [m]))


def test_changes_within_one_batch_window_share_one_array(home, open_socket):
    client = open_socket(home.admin_pair["accessToken"])
    for attempt in range(4):
        # Align on a flush: right after a batch arrives the next one is ~200 ms away.
        sync = fresh_key("ws.sync")
        put_settings(home, {sync: 1})
        client.wait_for(lambda c: settings_events_with(c, sync), timeout=2)
        keys = [fresh_key("ws.burst") for _ in range(3)]
        for key in keys:
            put_settings(home, {key: attempt})
        client.wait_for(lambda c: all(settings_events_with(c, k) for k in keys), timeout=2)
        carrying = [m for m in client.messages() if isinstance(m, list) and any(set(e.get("keys", ())) & set(keys) for e in m)]
        for message in carrying:
            assert all(isinstance(e, dict) and e.get("type") == "settings.changed" for e in message), message
        if len(carrying) == 1:
            assert [e["keys"] for e in carrying[0]] == [[k] for k in keys], "events keep their emission order"
            return
    pytest.fail("changes made within one 200 ms window never arrived in a single array")


def test_subscribe_replaces_the_topic_set_and_always_keeps_system(home, open_socket):
    client = open_socket(home.admin_pair["accessToken"])
    subscribe(client.ws, "logs")  # no "system" asked for: it is kept anyway
    marker = fresh_key("nobody")
    refuse_a_login(home, marker)
    entry = client.wait_for(lambda c: [e for e in c.events("log.entry") if "login refused" in e.get("msg", "")], timeout=2)[0]
    key = fresh_key()
    put_settings(home, {key: True})
    client.wait_for(lambda c: settings_events_with(c, key), timeout=2)
    assert entry["type"] == "log.entry"

    subscribe(client.ws, "devices", "equipments")  # replaces {logs}: no more log entries
    mark = client.mark()
    refuse_a_login(home, fresh_key("nobody"))
    key = fresh_key()
    put_settings(home, {key: True})
    client.wait_for(lambda c: settings_events_with(c, key), timeout=2)
    time.sleep(0.3)
    later = [e for m in client.messages_since(mark) for e in (m if isinstance(m, list) else [m])]
    assert not [e for e in later if e.get("type") == "log.entry"], later

    subscribe(client.ws, "logs", "bogus-topic", 42)  # unknown entries are ignored, known ones kept
    refuse_a_login(home, fresh_key("nobody"))
    client.wait_for(lambda c: [e for m in c.messages_since(mark) for e in (m if isinstance(m, list) else [m]) if e.get("type") == "log.entry"], timeout=2)


def test_log_entry_is_sent_alone_with_level_module_msg_time(home, open_socket):
    client = open_socket(home.admin_pair["accessToken"])
    subscribe(client.ws, "logs")
    refuse_a_login(home, fresh_key("nobody"))

    def refused(c):
        return [m for m in c.messages() if isinstance(m, dict) and m.get("type") == "log.entry" and "login refused" in m.get("msg", "")]

    messages = client.wait_for(refused, timeout=2)
    entry = messages[0]
    assert set(entry) == {"type", "level", "module", "msg", "time"}, entry
    assert entry["level"] == "info" and entry["module"] == "auth"
    assert isinstance(entry["time"], str) and entry["time"].endswith("Z")
    # Never inside a batch.
    assert not [e for m in client.messages() if isinstance(m, list) for e in m if e.get("type") == "log.entry"]


def test_standard_user_never_gets_admin_topics(home, open_socket):
    _, standard = home.new_user("standard")
    admin = open_socket(home.admin_pair["accessToken"])
    subscribe(admin.ws, "logs", "mqtt-publishers", settle=False)
    user = open_socket(standard.token)
    subscribe(user.ws, "logs", "mqtt-publishers")

    marker = fresh_key("nobody")
    refuse_a_login(home, marker)
    admin.wait_for(lambda c: c.events("log.entry"), timeout=2)  # the entry was streamed to those allowed
    key = fresh_key()
    put_settings(home, {key: 7})
    user.wait_for(lambda c: settings_events_with(c, key), timeout=2)  # system stays subscribed
    time.sleep(0.3)
    assert user.events("log.entry") == []
    assert all(e["type"] == "settings.changed" for e in user.events()), user.events()
