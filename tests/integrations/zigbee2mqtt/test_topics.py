"""Topic routing (friendly names with slashes), payload forms and broker URLs."""

from __future__ import annotations

import json

import pytest

from hausbox.integrations.builtin.zigbee2mqtt.connection import (
    describe_error,
    parse_broker_url,
)
from hausbox.integrations.builtin.zigbee2mqtt.topics import (
    Router,
    availability,
    is_command,
    json_object,
)
from tests import zigbee

KNOWN = frozenset(zigbee.kept_names())


@pytest.fixture
def router() -> Router:
    return Router("zigbee2mqtt")


def test_state_topics_are_matched_against_known_names_slashes_included(router):
    assert router.classify("zigbee2mqtt/salon_plafonnier", KNOWN) == ("state", "salon_plafonnier")
    assert router.classify("zigbee2mqtt/cuisine/spot", KNOWN) == ("state", "cuisine/spot")
    assert router.classify("zigbee2mqtt/jardin/vanne", KNOWN) == ("state", "jardin/vanne")
    # Every state topic of the fixtures routes to its device.
    for name, device in zigbee.states()["devices"].items():
        if name in KNOWN:
            assert router.classify(device["topic"], KNOWN) == ("state", name)


def test_availability_commands_and_bridge_topics_are_never_state(router):
    assert router.classify("zigbee2mqtt/cuisine/spot/availability", KNOWN) == ("availability", "cuisine/spot")
    assert router.classify("zigbee2mqtt/salon_plafonnier/availability", KNOWN) == ("availability", "salon_plafonnier")
    for topic in (
        "zigbee2mqtt/cuisine/spot/set",
        "zigbee2mqtt/cuisine/spot/get",
        "zigbee2mqtt/salon_plafonnier/set/brightness",
        "zigbee2mqtt/garage_relais/l1/set",
        "zigbee2mqtt/not_a_device",
        "zigbee2mqtt/cuisine",
        "other/salon_plafonnier",
        "zigbee2mqtt",
    ):
        assert router.classify(topic, KNOWN) == ("ignored", None), topic
    for variant in zigbee.orders()["topic_variants"]:
        assert router.classify(variant["topic"], KNOWN)[0] == "ignored", variant["topic"]
    assert router.classify("zigbee2mqtt/bridge/devices", KNOWN) == ("devices", None)
    assert router.classify("zigbee2mqtt/bridge/event", KNOWN) == ("event", None)
    assert router.classify("zigbee2mqtt/bridge/state", KNOWN) == ("bridge", None)
    assert router.classify("zigbee2mqtt/bridge/definitions", None) == ("bridge", None)


def test_before_the_first_device_list_non_command_topics_are_tried_as_state(router):
    assert router.classify("zigbee2mqtt/cuisine/spot", None) == ("state", "cuisine/spot")
    assert router.classify("zigbee2mqtt/cuisine/spot/availability", None) == ("availability", "cuisine/spot")
    assert router.classify("zigbee2mqtt/cuisine/spot/set", None) == ("ignored", None)
    assert router.classify("zigbee2mqtt/x/l2/get", None) == ("ignored", None)
    assert is_command("a/set") and is_command("a/b/set/brightness") and not is_command("set") and not is_command("a/b")


def test_base_topic_and_set_topic():
    router = Router("/home/z2m/")
    assert router.base == "home/z2m" and router.subscription == "home/z2m/#"
    assert router.set_topic("cuisine/spot") == "home/z2m/cuisine/spot/set"
    assert router.classify("home/z2m/cuisine/spot", KNOWN) == ("state", "cuisine/spot")
    assert Router("  ").base == "zigbee2mqtt"


def test_availability_payload_forms():
    assert availability(b'{"state":"online"}') == "online"
    assert availability(b'{"state": "offline"}') == "offline"
    assert availability(b"online") == "online" and availability(b"offline\n") == "offline"
    assert availability(b'"offline"') == "offline"
    assert availability(b"OFFLINE") == "offline"
    for garbage in (b"", b"maybe", b'{"state": 1}', b"{not json", b"\xff\xfe", b"[]"):
        assert availability(garbage) is None, garbage
    for example in zigbee.states()["availability"]:
        assert availability(json.dumps(example["payload"]).encode()) in ("online", "offline")


def test_state_payloads_must_be_json_objects():
    assert json_object(b'{"state": "ON"}') == {"state": "ON"}
    assert json_object(b'  {"a": 1}') == {"a": 1}
    for garbage in (b"ON", b"[1, 2]", b"", b"{broken", b"42"):
        assert json_object(garbage) is None


def test_broker_urls():
    plain = parse_broker_url("mqtt://127.0.0.1:1884")
    assert (plain.host, plain.port, plain.tls, plain.label) == ("127.0.0.1", 1884, False, "127.0.0.1:1884")
    assert parse_broker_url("mqtt://broker").port == 1883
    secure = parse_broker_url("mqtts://broker.lan")
    assert (secure.port, secure.tls) == (8883, True)
    assert parse_broker_url("broker.lan:1999").port == 1999
    creds = parse_broker_url("mqtt://user%40home:p%3Ass@h:1")
    assert (creds.username, creds.password) == ("user@home", "p:ss")
    for bad in ("", "http://x", "mqtt://:1883", "mqtt://h:notaport"):
        with pytest.raises(ValueError):
            parse_broker_url(bad)


def test_connection_errors_read_well():
    import socket

    assert describe_error(ConnectionRefusedError(111, "Connection refused")) == "connection refused"
    assert describe_error(socket.gaierror(-2, "Name or service not known")) == "host not found"
    assert describe_error(TimeoutError()) == "timed out"
    assert describe_error(OSError(113, "No route to host")) == "no route to host"
