"""core/settings: the flat key/value store, its change events, persistence and scoped views."""

from __future__ import annotations

import sqlite3

import pytest

from hausbox.core import database
from hausbox.core import settings as settings_module
from hausbox.core.bus import EventBus
from hausbox.core.settings import SettingsStore, is_secret_key


def open_db(path):
    return database.open_database(path, [settings_module.define_entities])


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "settings.db"


@pytest.fixture
def db(db_path):
    db = open_db(db_path)
    yield db
    db.disconnect()


@pytest.fixture
def bus():
    return EventBus()


@pytest.fixture
def changes(bus):
    seen = []
    bus.on("settings.changed", seen.append)
    return seen


def stored_rows(path):
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM settings"))


def test_set_many_emits_only_the_changed_keys_sorted(db, bus, changes):
    store = SettingsStore(db, bus)
    assert store.set_many({"zeta": 1, "alpha": "a", "mid": True}) == ["alpha", "mid", "zeta"]
    assert changes == [{"type": "settings.changed", "keys": ["alpha", "mid", "zeta"]}]

    changes.clear()
    # alpha and mid are unchanged; zeta changes; beta is new.
    assert store.set_many({"mid": True, "zeta": 2, "alpha": "a", "beta": 0.5}) == ["beta", "zeta"]
    assert changes == [{"type": "settings.changed", "keys": ["beta", "zeta"]}]
    assert store.all() == {"alpha": "a", "mid": True, "zeta": 2, "beta": 0.5}


def test_nothing_changed_emits_nothing(db, bus, changes):
    store = SettingsStore(db, bus)
    store.set_many({"a": "x", "b": 3})
    changes.clear()
    assert store.set_many({"a": "x", "b": 3}) == []
    assert store.set_many({}) == []
    assert store.set("a", "x") is False
    assert store.set_many({"never.set": None}) == []  # deleting a missing key changes nothing
    assert changes == []


def test_none_deletes_the_key_in_memory_and_on_disk(db, db_path, bus, changes):
    store = SettingsStore(db, bus)
    store.set_many({"keep": "k", "drop": "d"})
    changes.clear()
    assert store.set_many({"drop": None}) == ["drop"]
    assert changes == [{"type": "settings.changed", "keys": ["drop"]}]
    assert store.get("drop") is None and store.get("drop", "fallback") == "fallback"
    assert store.all() == {"keep": "k"}
    assert stored_rows(db_path) == {"keep": '"k"'}


def test_bool_and_int_are_distinct_values(db, db_path, bus, changes):
    store = SettingsStore(db, bus)
    store.set("flag", True)
    changes.clear()
    # True == 1 in Python, but they are different JSON values: this is a change.
    assert store.set_many({"flag": 1}) == ["flag"]
    assert store.get("flag") == 1 and type(store.get("flag")) is int
    assert stored_rows(db_path)["flag"] == "1"
    assert store.set_many({"flag": True}) == ["flag"]
    assert store.get("flag") is True
    assert stored_rows(db_path)["flag"] == "true"
    assert store.set_many({"flag": True}) == []
    # 0 and False likewise, and an int and a float.
    store.set("n", 0)
    assert store.set_many({"n": False}) == ["n"]
    store.set("f", 1)
    assert store.set_many({"f": 1.0}) == ["f"]
    assert [event["keys"] for event in changes] == [["flag"], ["flag"], ["n"], ["n"], ["f"], ["f"]]


def test_values_persist_across_a_new_store_on_the_same_database(db, db_path, bus):
    store = SettingsStore(db, bus)
    store.set_many({"s": "text", "i": 42, "f": 2.5, "t": True, "z": False, "gone": "x"})
    store.set("gone", None)
    db.disconnect()

    again = open_db(db_path)  # a fresh Pony database on the same file
    try:
        reloaded = SettingsStore(again, EventBus())
        assert reloaded.all() == {"s": "text", "i": 42, "f": 2.5, "t": True, "z": False}
        assert type(reloaded.get("t")) is bool and type(reloaded.get("i")) is int and type(reloaded.get("f")) is float
        # The reloaded values are the baseline for change detection.
        assert reloaded.set_many({"t": True, "i": 42}) == []
        assert reloaded.set_many({"t": 1}) == ["t"]
    finally:
        again.disconnect()


def test_get_all_and_with_prefix(db, bus):
    store = SettingsStore(db, bus)
    store.set_many({"home.latitude": 48.8, "home.longitude": 2.3, "homes": "x"})
    assert store.get("home.latitude") == 48.8
    assert store.get("missing") is None
    assert store.with_prefix("home.") == {"latitude": 48.8, "longitude": 2.3}
    copy = store.all()
    copy["home.latitude"] = 0
    assert store.get("home.latitude") == 48.8  # all() is a copy


def test_scoped_view_reads_and_writes_only_under_its_prefix(db, bus, changes):
    store = SettingsStore(db, bus)
    store.set_many({"integration.z2m.base_topic": "zigbee2mqtt", "integration.other.x": 1, "top": "t"})
    changes.clear()

    scoped = store.scoped("integration.z2m.")
    assert scoped.prefix == "integration.z2m."
    assert scoped.get("base_topic") == "zigbee2mqtt"
    assert scoped.get("x") is None and scoped.get("top", "d") == "d"
    assert scoped.all() == {"base_topic": "zigbee2mqtt"}

    assert scoped.set_many({"mqtt_url": "mqtt://localhost", "base_topic": "zigbee2mqtt"}) == ["integration.z2m.mqtt_url"]
    assert store.get("integration.z2m.mqtt_url") == "mqtt://localhost"
    assert scoped.set("base_topic", None) is True
    assert "integration.z2m.base_topic" not in store.all()
    assert changes[-1] == {"type": "settings.changed", "keys": ["integration.z2m.base_topic"]}

    keys = ["integration.z2m.mqtt_url", "integration.other.x", "top", "integration.z2m.a.b"]
    assert scoped.keys_changed(keys) == ["mqtt_url", "a.b"]


def test_secret_values_are_reported_on_load_and_on_write(db, db_path, bus):
    learnt = []
    store = SettingsStore(db, bus, on_secret=learnt.append)
    store.set_many({"integration.z2m.mqtt_password": "hunter2-pw", "integration.z2m.mqtt_username": "bob", "x.apiKey": "k-123"})
    assert sorted(learnt) == ["hunter2-pw", "k-123"]
    db.disconnect()

    again = open_db(db_path)
    try:
        learnt_on_load = []
        SettingsStore(again, EventBus(), on_secret=learnt_on_load.append)
        assert sorted(learnt_on_load) == ["hunter2-pw", "k-123"]
    finally:
        again.disconnect()


@pytest.mark.parametrize(
    "key, secret",
    [
        ("integration.zigbee2mqtt.mqtt_password", True),
        ("notify.telegram.token", True),
        ("x.clientSecret", True),
        ("x.api_key", True),
        ("x.ApiKey", True),
        ("password.hint", False),  # only the last segment counts
        ("integration.zigbee2mqtt.mqtt_username", False),
        ("home.latitude", False),
    ],
)
def test_is_secret_key(key, secret):
    assert is_secret_key(key) is secret
