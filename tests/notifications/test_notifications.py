"""Notification publishers in process: real device messages through the pipeline, real HTTP(S) to
local rude servers playing Telegram, a webhook target and a push service (decrypted here)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import gevent
import http_ece
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from tests.notifications.fakes import FakeHttp

TOKEN = "424242:AAH-secret-bot-token_xyz"
HOOK_SECRET = "hook-secret-9f8e7d"


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        gevent.sleep(0.01)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture
def fakes(tmp_path):
    made: list[FakeHttp] = []

    def make(**options) -> FakeHttp:
        fake = FakeHttp(**options)
        made.append(fake)
        return fake

    yield make
    for fake in made:
        fake.close()


@pytest.fixture
def home(make_house):
    house = make_house()
    house.engine.notifications.backoff_s = (0.05, 0.4)
    house.start()
    return house


def call(house, method, path, body=None, token=None):
    status, _, raw = house.api(method, path, body, token)
    return status, (json.loads(raw) if raw else None)


def publisher(house, channel_type, config, **extra) -> str:
    status, body = call(house, "POST", "/notification-publishers", {"name": f"{channel_type} pub", "channelType": channel_type, "channelConfig": config, **extra})
    assert status == 201, body
    return body["id"]


def mapping(house, publisher_id, source_id, key, message, **extra) -> str:
    body = {"message": message, "sourceType": "equipment", "sourceId": source_id, "sourceKey": key, **extra}
    status, answer = call(house, "POST", f"/notification-publishers/{publisher_id}/mappings", body)
    assert status == 201, answer
    return answer["id"]


def telegram_texts(fake) -> list[str]:
    return [json.loads(r.body)["text"] for r in fake.received]


def settle_lanes(house) -> None:
    house.settle()
    wait_until(house.engine.notifications.idle)


# ---- mappings through the pipeline -------------------------------------------------------------------
def test_a_device_message_reaches_telegram_through_a_mapping(home, fakes):
    telegram = fakes()
    door = home.contact("door")
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": -1001, "apiUrl": telegram.url})
    mapping(home, pid, door, "contact", "Front door")
    home.report("door", contact=True)
    settle_lanes(home)
    assert [r.path for r in telegram.received] == [f"/bot{TOKEN}/sendMessage"]
    assert json.loads(telegram.received[0].body) == {"chat_id": -1001, "text": "Front door"}  # a boolean: the message alone
    home.report("door", contact=True)  # the same value: nothing
    home.report("door", contact=False)  # a change of a boolean: at once
    settle_lanes(home)
    assert telegram_texts(telegram) == ["Front door", "Front door"]
    delivery = call(home, "GET", f"/notification-publishers/{pid}")[1]["delivery"]
    assert delivery["state"] == "ok" and delivery["sent"] == 2 and delivery["failedAttempts"] == 0


def test_numbers_are_throttled_and_strings_are_not(home, fakes):
    telegram = fakes()
    trv = home.thermostat("trv")
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": "@home", "apiUrl": telegram.url})
    mapping(home, pid, trv, "local_temperature", "Living room", throttleMs=300)
    for value in (19.5, 19.7, 19.9):
        home.report("trv", local_temperature=value)
    settle_lanes(home)
    assert telegram_texts(telegram) == ["Living room : 19.5"]  # the next two fall within throttleMs
    gevent.sleep(0.35)
    home.report("trv", local_temperature=20.1)
    settle_lanes(home)
    assert telegram_texts(telegram) == ["Living room : 19.5", "Living room : 20.1"]


def test_system_alarms_go_to_every_enabled_publisher_that_asks(home, fakes):
    asks, other, off = fakes(), fakes(), fakes()
    publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1, "apiUrl": asks.url}, forwardAlarms=True)
    publisher(home, "telegram", {"botToken": TOKEN, "chatId": 2, "apiUrl": other.url})
    publisher(home, "telegram", {"botToken": TOKEN, "chatId": 3, "apiUrl": off.url}, forwardAlarms=True, enabled=False)
    hook = fakes()
    publisher(home, "webhook", {"url": hook.url + "/alarms"}, forwardAlarms=True)
    home.engine.alarms.raise_alarm("disk", "error", "storage", "Disk almost full")
    home.engine.alarms.resolve("disk", "Disk has room again")
    settle_lanes(home)
    assert telegram_texts(asks) == ["⚠️ storage : Disk almost full", "✅ storage : Disk has room again"]
    assert other.received == [] and off.received == []
    alarm = json.loads(hook.received[0].body)
    assert alarm["kind"] == "alarm" and alarm["alarmId"] == "disk" and alarm["level"] == "error" and alarm["resolved"] is False


def test_a_failing_channel_is_retried_with_backoff_while_another_delivers(home, fakes):
    failing, healthy = fakes(), fakes()
    failing.answers = [500, "close", 503]  # then 200
    door = home.contact("door")
    bad = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1, "apiUrl": failing.url})
    good = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 2, "apiUrl": healthy.url})
    mapping(home, bad, door, "contact", "Door (bad)")
    mapping(home, good, door, "contact", "Door (good)")
    start = time.monotonic()
    home.report("door", contact=True)
    wait_until(lambda: healthy.received)
    assert time.monotonic() - start < 0.5  # not behind the failing one's retries
    delivery = call(home, "GET", f"/notification-publishers/{bad}")[1]["delivery"]
    assert delivery["state"] == "retrying" and delivery["lastError"] == "the Telegram API answered 500" and delivery["queued"] == 1
    wait_until(lambda: len(failing.received) == 4)
    settle_lanes(home)
    gaps = [b.at - a.at for a, b in zip(failing.received, failing.received[1:])]
    assert gaps[0] >= 0.045 and gaps[1] >= 0.095 and gaps[2] >= 0.195, gaps  # 0.05, 0.1, 0.2 s
    assert telegram_texts(failing) == ["Door (bad)"] * 4 and telegram_texts(healthy) == ["Door (good)"]
    delivery = call(home, "GET", f"/notification-publishers/{bad}")[1]["delivery"]
    assert delivery["state"] == "ok" and delivery["sent"] == 1 and delivery["failedAttempts"] == 3 and delivery["queued"] == 0
    assert TOKEN not in json.dumps(delivery)


def test_a_refused_message_is_dropped_and_reported(home, fakes):
    telegram = fakes(default=401)
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1, "apiUrl": telegram.url})
    status, body = call(home, "POST", f"/notification-publishers/{pid}/test-channel")
    assert status == 400 and body["error"] == "Test message not delivered: the Telegram API answered 401"
    door = home.contact("door")
    mapping(home, pid, door, "contact", "Door")
    home.report("door", contact=True)
    settle_lanes(home)
    delivery = call(home, "GET", f"/notification-publishers/{pid}")[1]["delivery"]
    assert (delivery["state"], delivery["dropped"], len(telegram.received)) == ("failing", 1, 2)


def test_webhook_carries_a_verifiable_hmac(home, fakes):
    hook = fakes()
    door = home.contact("door")
    pid = publisher(home, "webhook", {"url": hook.url + "/in", "secret": HOOK_SECRET})
    mapping(home, pid, door, "contact", "Door")
    home.report("door", contact=True)
    settle_lanes(home)
    request = hook.received[0]
    expected = "sha256=" + hmac.new(HOOK_SECRET.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.path == "/in" and hmac.compare_digest(request.headers["x-hausbox-signature"], expected)
    payload = json.loads(request.body)
    assert payload["text"] == "Door" and payload["kind"] == "mapping" and payload["value"] is True and payload["sourceId"] == door
    unsigned = publisher(home, "webhook", {"url": hook.url})
    assert call(home, "POST", f"/notification-publishers/{unsigned}/test-channel") == (200, {"success": True, "sent": 1})
    assert "x-hausbox-signature" not in hook.received[-1].headers


def test_the_test_route_sends_each_mappings_current_value(home, fakes):
    telegram = fakes()
    trv, door = home.thermostat("trv"), home.contact("door")
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1, "apiUrl": telegram.url})
    mapping(home, pid, trv, "local_temperature", "Temp")
    mapping(home, pid, door, "contact", "Door")  # no value yet: skipped
    home.report("trv", local_temperature=21)
    settle_lanes(home)
    telegram.received.clear()
    assert call(home, "POST", f"/notification-publishers/{pid}/test") == (200, {"sent": 1})
    settle_lanes(home)
    assert telegram_texts(telegram) == ["Temp : 21"]


# ---- web push -----------------------------------------------------------------------------------------
@pytest.fixture
def push_service(fakes, tmp_path, monkeypatch):
    service = fakes(tls_dir=tmp_path / "tls", default=201)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(service.cert_path))  # the box trusts the test's push service
    return service


def browser_keys():
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    auth = b"0123456789abcdef"
    return key, b64url(public), b64url(auth), auth


def check_vapid(header: str, vapid_public: str, audience: str) -> dict:
    scheme, _, params = header.partition(" ")
    fields = dict(part.split("=", 1) for part in params.split(","))
    assert scheme == "vapid" and fields["k"] == vapid_public
    signing_input, _, signature = fields["t"].rpartition(".")
    raw = unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(vapid_public))
    public.verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))  # raises if not signed by the box's key
    header_json, claims_json = (json.loads(unb64url(part)) for part in signing_input.split("."))
    assert header_json["alg"] == "ES256"
    assert claims_json["aud"] == audience and claims_json["exp"] > time.time() and claims_json["sub"].startswith("mailto:")
    return claims_json


def test_web_push_is_vapid_signed_and_decryptable_by_the_browser(home, push_service):
    key, p256dh, auth_b64, auth = browser_keys()
    endpoint = push_service.url + "/push/abc123"
    status, body = call(home, "POST", "/push/subscriptions", {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth_b64}})
    assert status == 201 and body["endpoint"] == endpoint
    vapid_public = call(home, "GET", "/push/vapid-public-key")[1]["publicKey"]
    door = home.contact("door")
    pid = publisher(home, "webpush", {})
    mapping(home, pid, door, "contact", "Door opened")
    home.report("door", contact=True)
    settle_lanes(home)
    request = push_service.received[0]
    assert request.path == "/push/abc123" and request.headers["content-encoding"] == "aes128gcm" and int(request.headers["ttl"]) > 0
    check_vapid(request.headers["authorization"], vapid_public, push_service.url)
    plain = http_ece.decrypt(request.body, private_key=key, auth_secret=auth, version="aes128gcm")
    message = json.loads(plain)
    assert message["title"] == "webpush pub" and message["body"] == "Door opened" and message["kind"] == "mapping"
    # the key survives a restart: browsers subscribed with it
    home.restart()
    home.start()
    assert call(home, "GET", "/push/vapid-public-key")[1]["publicKey"] == vapid_public


def test_a_subscription_its_push_service_forgot_is_removed(home, push_service):
    _, p256dh, auth_b64, _ = browser_keys()
    for name in ("gone", "kept"):
        call(home, "POST", "/push/subscriptions", {"endpoint": f"{push_service.url}/push/{name}", "keys": {"p256dh": p256dh, "auth": auth_b64}})
    push_service.answers = [410]
    pid = publisher(home, "webpush", {"subject": "https://home.example"})
    assert call(home, "POST", f"/notification-publishers/{pid}/test-channel") == (200, {"success": True, "sent": 1})
    assert [s["endpoint"].rsplit("/", 1)[1] for s in home.engine.notifications.push.all()] == ["kept"]
    push_service.answers = [404]
    door = home.contact("door")
    mapping(home, pid, door, "contact", "Door")
    home.report("door", contact=True)
    settle_lanes(home)
    assert home.engine.notifications.push.all() == []


@pytest.mark.parametrize(
    "body, error",
    [
        ({"endpoint": "http://push.example/x", "keys": {"p256dh": "P", "auth": "A"}}, "endpoint must be an https URL"),
        ({"endpoint": "https://push.example/x", "keys": {"p256dh": "not base64!", "auth": "A"}}, "keys.p256dh must be base64url"),
        ({"endpoint": "https://push.example/x", "keys": {"p256dh": b64url(b"\x04" + b"\x01" * 64), "auth": b64url(b"a" * 16)}}, "keys.p256dh is not a point of the P-256 curve"),
        ({"endpoint": "https://push.example/x", "keys": {"p256dh": b64url(b"\x04" * 33), "auth": b64url(b"a" * 16)}}, "keys.p256dh must be an uncompressed P-256 public key (65 bytes)"),
        ({"endpoint": "https://push.example/x", "keys": {"p256dh": "VALID", "auth": b64url(b"short")}}, "keys.auth must be 16 bytes"),
        ({"endpoint": "https://push.example/x", "keys": {"p256dh": "VALID"}}, "keys.auth is required"),
        ({"endpoint": 5, "keys": {"p256dh": "x", "auth": "y"}}, "endpoint must be a string"),
    ],
)
def test_bad_subscriptions_are_400(home, body, error):
    if body["keys"].get("p256dh") == "VALID":
        body["keys"]["p256dh"] = browser_keys()[1]
    assert call(home, "POST", "/push/subscriptions", body) == (400, {"error": error})


def test_a_standard_user_manages_only_their_own_subscriptions(home):
    _, p256dh, auth, _ = browser_keys()
    home.token()  # the administrator first
    home.engine.auth.users.create("alice", "correct-horse-42", "Alice", "standard")
    token = home.engine.auth.login("alice", "correct-horse-42")["accessToken"]
    mine = {"endpoint": "https://push.example/alice", "keys": {"p256dh": p256dh, "auth": auth}}
    admins = {"endpoint": "https://push.example/admin", "keys": {"p256dh": p256dh, "auth": auth}}
    assert call(home, "POST", "/push/subscriptions", mine, token=token)[0] == 201
    assert call(home, "POST", "/push/subscriptions", admins)[0] == 201
    assert call(home, "DELETE", "/push/subscriptions", {"endpoint": admins["endpoint"]}, token=token) == (404, {"error": "Push subscription not found"})
    assert call(home, "DELETE", "/push/subscriptions", {"endpoint": mine["endpoint"]}, token=token) == (204, None)
    assert call(home, "DELETE", "/push/subscriptions", {"endpoint": mine["endpoint"]}, token=token)[0] == 404
    assert call(home, "GET", "/notification-publishers", token=token) == (403, {"error": "Admin access required"})
    assert call(home, "GET", "/push/vapid-public-key", token=token)[0] == 200


# ---- configuration errors and secrets --------------------------------------------------------------------
@pytest.mark.parametrize(
    "body, error",
    [
        ({"name": "x", "channelType": "sms", "channelConfig": {}}, "channelType must be one of telegram, webhook, webpush"),
        ({"name": "x", "channelType": "telegram", "channelConfig": {"chatId": 1}}, "channelConfig.botToken is required"),
        ({"name": "x", "channelType": "telegram", "channelConfig": {"botToken": "a b/c", "chatId": 1}}, "channelConfig.botToken is not in the expected format"),
        ({"name": "x", "channelType": "telegram", "channelConfig": {"botToken": TOKEN, "chatId": True}}, "channelConfig.chatId has the wrong type"),
        ({"name": "x", "channelType": "webhook", "channelConfig": {"url": "ftp://x"}}, "channelConfig.url must be an http or https URL"),
        ({"name": "x", "channelType": "webhook", "channelConfig": {"url": "http://x:99999"}}, "channelConfig.url is not a valid URL"),
        ({"name": "x", "channelType": "webpush", "channelConfig": {"subject": "me"}}, "channelConfig.subject must be a mailto: or https: URL"),
        ({"name": "x", "channelType": "webpush", "channelConfig": []}, "channelConfig must be an object"),
    ],
)
def test_bad_publishers_are_400(home, body, error):
    assert call(home, "POST", "/notification-publishers", body) == (400, {"error": error})


def test_mapping_errors(home, fakes):
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1})
    door = home.contact("door")
    mapping(home, pid, door, "contact", "Door")
    base = {"message": "m", "sourceType": "equipment", "sourceId": door, "sourceKey": "contact"}
    assert call(home, "POST", f"/notification-publishers/{pid}/mappings", base)[0] == 409
    assert call(home, "POST", f"/notification-publishers/{pid}/mappings", {**base, "sourceId": "nope"}) == (400, {"error": "sourceId: equipment not found: nope"})
    assert call(home, "POST", "/notification-publishers/nope/mappings", base)[0] == 404
    assert call(home, "PUT", f"/notification-publishers/{pid}/mappings/nope", {"message": "x"})[0] == 404
    assert call(home, "DELETE", "/notification-publishers/nope")[0] == 404
    assert call(home, "POST", "/notification-publishers/nope/test-channel")[0] == 404


def test_secrets_stay_out_of_events_and_logs(home, fakes):
    telegram = fakes(default=500)
    pid = publisher(home, "telegram", {"botToken": TOKEN, "chatId": 1, "apiUrl": telegram.url})
    publisher(home, "webhook", {"url": "http://user:pw-in-url@127.0.0.1:9/x", "secret": HOOK_SECRET})
    call(home, "PUT", f"/notification-publishers/{pid}", {"name": "renamed"})
    door = home.contact("door")
    mapping(home, pid, door, "contact", "Door")
    home.report("door", contact=True)
    wait_until(lambda: len(telegram.received) >= 2)
    events = [e for e in home.recorder.events if e["type"].startswith("notification-publisher.")]
    assert {e["type"] for e in events} >= {"notification-publisher.created", "notification-publisher.updated", "notification-publisher.mapping.created"}
    text = json.dumps(events)
    assert TOKEN not in text and HOOK_SECRET not in text and "pw-in-url" not in text
    assert events[0]["publisher"]["channelConfig"]["botToken"] == "***"
    logs = json.dumps(home.engine.log_ring.query(limit=2000, module="notifications"))
    assert "answered 500" in logs and TOKEN not in logs
    assert call(home, "GET", f"/notification-publishers/{pid}")[1]["channelConfig"]["botToken"] == TOKEN  # administrators see it
