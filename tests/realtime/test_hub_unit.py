"""WebSocketHub in process: fake sockets, a stub auth service, ``flush()`` driven by hand (no flush loop)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import Any

import gevent
import pytest
from gevent.event import Event as Gate
from gevent.queue import Queue

from hausbox.auth.principal import Principal
from hausbox.core.bus import EventBus
from hausbox.core.errors import Unauthorized
from hausbox.realtime.hub import CLOSE_INVALID_TOKEN, WebSocketHub

ADMIN = Principal("u-admin", "admin", "admin", "jwt", session_id="s-admin")
STANDARD = Principal("u-std", "standard", "standard", "jwt", session_id="s-std")
OTHER_STANDARD = Principal("u-std2", "standard2", "standard", "api_token", token_id="t-std2")


class FakeRawSocket:
    """The TCP socket under a handler: like gevent's, close() alone does not wake a blocked reader
    while the handler's rfile holds it; shutdown() does."""

    def __init__(self, ws: "FakeSocket") -> None:
        self._ws = ws
        self.shut = False

    def shutdown(self, how: int) -> None:
        self.shut = True
        self._ws._inbox.put(None)

    def close(self) -> None:
        pass


class FakeSocket:
    """What the hub uses of a gevent-websocket socket: send(text), close(code, msg), receive()."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed_with: tuple[int, Any] | None = None
        self._inbox: Queue = Queue()
        self._open = Gate()
        self._open.set()
        self.handler = SimpleNamespace(socket=FakeRawSocket(self))

    def send(self, text: str) -> None:
        self._open.wait()  # a stalled peer: send blocks, as on a full TCP buffer
        self.sent.append(text)

    def close(self, code: int, message: Any = b"") -> None:
        self.closed_with = (code, message)
        self._inbox.put(None)

    def receive(self) -> str | None:
        return self._inbox.get()

    # ---- test side ---------------------------------------------------------------------------
    def stall(self) -> None:
        self._open.clear()

    def push(self, message: Any) -> None:
        self._inbox.put(json.dumps(message))

    def hang_up(self) -> None:
        self._inbox.put(None)

    def messages(self) -> list[Any]:
        return [json.loads(text) for text in self.sent]

    def events(self) -> list[dict[str, Any]]:
        """Every event after the welcome, batches flattened."""
        found: list[dict[str, Any]] = []
        for message in self.messages()[1:]:
            found.extend(message if isinstance(message, list) else [message])
        return found


class StubAuth:
    def __init__(self) -> None:
        self.by_token = {"admin": ADMIN, "standard": STANDARD, "standard2": OTHER_STANDARD}
        self.revoked: set[str] = set()

    def principal_from_token(self, token: str) -> Principal:
        principal = self.by_token.get(token)
        if principal is None or principal.user_id in self.revoked:
            raise Unauthorized("Invalid or expired token")
        return principal

    def still_valid(self, principal: Principal) -> bool:
        return principal.user_id not in self.revoked


def settle() -> None:
    gevent.sleep(0)
    gevent.sleep(0.01)


@pytest.fixture
def world():
    bus = EventBus()
    auth = StubAuth()
    hub = WebSocketHub(bus, auth, max_backlog_bytes=64 * 1024)
    handlers: list[gevent.Greenlet] = []

    def connect(token: str, *topics: str) -> FakeSocket:
        ws = FakeSocket()
        environ = {"wsgi.websocket": ws, "QUERY_STRING": f"token={token}"}
        handlers.append(gevent.spawn(hub.handle, environ, lambda *a: None))
        settle()
        if topics:
            ws.push({"type": "subscribe", "topics": list(topics)})
            settle()
        return ws

    yield bus, auth, hub, connect
    hub.stop()
    gevent.killall(handlers, timeout=1)


def test_welcome_then_subscribed_to_system_only(world):
    bus, _, hub, connect = world
    ws = connect("admin")
    welcome = ws.messages()[0]
    assert welcome["type"] == "connected" and welcome["message"] and isinstance(welcome["version"], str)
    assert [c.topics for c in hub.clients] == [frozenset({"system"})]
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=1)
    bus.emit("settings.changed", keys=["a"])
    hub.flush()
    settle()
    assert ws.events() == [{"type": "settings.changed", "keys": ["a"]}]


def test_invalid_token_is_closed_with_4001_and_never_registered(world):
    _, _, hub, connect = world
    ws = connect("nope")
    assert ws.sent == []
    assert ws.closed_with is not None and ws.closed_with[0] == CLOSE_INVALID_TOKEN
    assert hub.clients == set()


def test_device_data_is_deduplicated_to_the_latest_value_and_order_is_kept(world):
    bus, _, hub, connect = world
    ws = connect("admin", "devices", "equipments")
    for value in (1, 2, 3):
        bus.emit("device.data.updated", deviceId="d1", deviceName="Probe", key="temp", value=value, previous=value - 1)
    bus.emit("equipment.data.changed", equipmentId="e1", alias="temp", value=3, previous=2)
    hub.flush()
    settle()
    batches = ws.messages()[1:]
    assert len(batches) == 1 and isinstance(batches[0], list)
    assert [(e["type"], e["value"]) for e in batches[0]] == [("device.data.updated", 3), ("equipment.data.changed", 3)]
    assert batches[0][0]["previous"] == 2  # the whole latest event, not a merge


def test_dedupe_is_per_key_and_per_batch(world):
    bus, _, hub, connect = world
    ws = connect("admin", "devices", "equipments", "zones")
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=20)
    bus.emit("device.data.updated", deviceId="d1", key="humidity", value=40)
    bus.emit("device.data.updated", deviceId="d2", key="temp", value=18)
    bus.emit("equipment.data.changed", equipmentId="e1", alias="temp", value=20)
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=21)
    bus.emit("equipment.data.changed", equipmentId="e1", alias="temp", value=21)
    bus.emit("zone.data.changed", zoneId="z1", aggregatedData={"temp": 21})
    bus.emit("settings.changed", keys=["x"])  # not a data event: never merged
    bus.emit("settings.changed", keys=["x"])
    hub.flush()
    settle()
    seen = [(e["type"], e.get("deviceId") or e.get("equipmentId") or e.get("zoneId"), e.get("key"), e.get("value")) for e in ws.events()]
    assert seen == [
        ("device.data.updated", "d1", "humidity", 40),
        ("device.data.updated", "d2", "temp", 18),
        ("device.data.updated", "d1", "temp", 21),  # cause (latest) before its effect
        ("equipment.data.changed", "e1", None, 21),
        ("zone.data.changed", "z1", None, None),
        ("settings.changed", None, None, None),
        ("settings.changed", None, None, None),
    ]
    # The next round starts empty: a new value is sent again, the old ones are not.
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=22)
    hub.flush()
    settle()
    assert ws.messages()[-1] == [{"type": "device.data.updated", "deviceId": "d1", "key": "temp", "value": 22}]


def test_role_filtering_on_delivery(world):
    bus, _, hub, connect = world
    admin = connect("admin")
    standard = connect("standard")
    bus.emit("notification-publisher.created", publisher={"id": "n1", "config": {"token": "channel-secret"}})
    bus.emit("notification-publisher.removed", publisherId="n1", publisherName="Phone")
    bus.emit("system.update.progress", step="download", message="fetching https://example.invalid/v2.tar.gz")
    bus.emit("system.alarm.raised", alarmId="a1", level="critical", source="battery", message="Battery of Door sensor low")
    bus.emit("system.error", error="database locked at /data/hausbox.db")
    bus.emit("auth.revoked", userId="someone-else")
    hub.flush()
    settle()

    got = standard.events()
    assert [e["type"] for e in got] == ["system.update.progress", "system.alarm.raised", "system.error"]
    assert got[0] == {"type": "system.update.progress", "step": "download", "message": "[redacted]"}
    assert got[1]["message"] == "Battery of Door sensor low" and got[1]["level"] == "critical"
    assert got[2]["error"] == "[redacted]"

    got = admin.events()
    assert [e["type"] for e in got] == [
        "notification-publisher.created",
        "notification-publisher.removed",
        "system.update.progress",
        "system.alarm.raised",
        "system.error",
    ]
    assert got[0]["publisher"]["config"]["token"] == "channel-secret"
    assert got[2]["message"] == "fetching https://example.invalid/v2.tar.gz" and got[2]["step"] == "download"
    assert got[3]["message"] == "Battery of Door sensor low"
    assert got[4]["error"] == "database locked at /data/hausbox.db"


def test_internal_events_never_reach_anyone(world):
    bus, _, hub, connect = world
    everything = ("devices", "equipments", "zones", "modes", "recipes", "calendar", "mqtt-publishers", "system", "logs", "activity")
    sockets = [connect("admin", *everything), connect("standard", *everything)]
    bus.emit("auth.revoked", userId="nobody")
    bus.emit("auth.revoked", userId="nobody", tokenId="t1")
    hub.flush()
    settle()
    for ws in sockets:
        assert ws.events() == []
        assert ws.closed_with is None  # revalidation ran and kept them: nothing of theirs was revoked
    assert "auth.revoked" not in json.dumps([ws.sent for ws in sockets])


def test_admin_topics_are_silently_dropped_for_standard(world):
    bus, _, hub, connect = world
    admin = connect("admin", "logs", "mqtt-publishers")
    standard = connect("standard", "logs", "mqtt-publishers", "devices")
    assert {c.principal.role: c.topics for c in hub.clients}["standard"] == frozenset({"system", "devices"})
    bus.emit("log.entry", level="info", module="auth", msg="login refused", time="2026-01-01T00:00:00.000Z")
    bus.emit("mqtt-publisher.created", publisher={"id": "p1"})
    hub.flush()
    settle()
    assert standard.events() == []
    lone, batch = admin.messages()[1:]
    assert lone == {"type": "log.entry", "level": "info", "module": "auth", "msg": "login refused", "time": "2026-01-01T00:00:00.000Z"}
    assert batch == [{"type": "mqtt-publisher.created", "publisher": {"id": "p1"}}]


def test_log_entries_are_sent_at_once_without_a_flush(world):
    bus, _, hub, connect = world
    ws = connect("admin", "logs")
    bus.emit("log.entry", level="warn", module="x", msg="one", time="t")
    bus.emit("log.entry", level="warn", module="x", msg="two", time="t")
    settle()  # no flush()
    assert [m["msg"] for m in ws.messages()[1:]] == ["one", "two"]


def test_revalidation_closes_revoked_clients_with_4001(world):
    bus, auth, hub, connect = world
    admin = connect("admin")
    standard = connect("standard")
    other = connect("standard2")
    auth.revoked.add(STANDARD.user_id)
    bus.emit("auth.revoked", userId=STANDARD.user_id)
    settle()
    assert standard.closed_with is not None and standard.closed_with[0] == CLOSE_INVALID_TOKEN
    assert admin.closed_with is None and other.closed_with is None
    assert {c.principal.username for c in hub.clients} == {"admin", "standard2"}
    bus.emit("settings.changed", keys=["after"])
    hub.flush()
    settle()
    assert standard.events() == []
    assert other.events() == [{"type": "settings.changed", "keys": ["after"]}]


def test_a_stalled_client_is_dropped_without_holding_back_the_engine_or_others(world):
    bus, _, hub, connect = world
    healthy = connect("admin")
    stalled = connect("admin")
    stalled.stall()
    stalled_client = next(c for c in hub.clients if c.ws is stalled)
    keys = [f"k{i:03d}." + "x" * 180 for i in range(50)]  # ~10 KB an event
    slowest = 0.0
    for round_ in range(20):  # ~200 KB in all, the backlog limit is 64 KB
        bus.emit("settings.changed", keys=keys + [f"round{round_}"])
        started = time.perf_counter()
        hub.flush()
        slowest = max(slowest, time.perf_counter() - started)
        settle()
    assert slowest < 0.05, "flush() must never wait on a socket"
    assert [e["keys"][-1] for e in healthy.events()] == [f"round{r}" for r in range(20)]
    assert stalled_client.closed, "the stalled client must be dropped once its backlog passes the limit"
    assert stalled.events() == []
    assert healthy.closed_with is None
    # Its connection is cut (it is mid-frame, so no close frame) and it is forgotten.
    assert stalled.handler.socket.shut
    assert [c.ws for c in hub.clients] == [healthy]
    assert not healthy.handler.socket.shut


def test_one_large_batch_does_not_drop_a_client_that_keeps_up(world):
    bus, _, hub, connect = world
    ws = connect("admin")
    big = ["k" * 190 + str(i) for i in range(500)]  # ~100 KB, above the 64 KB backlog limit by itself
    bus.emit("settings.changed", keys=big)
    hub.flush()
    settle()
    assert ws.closed_with is None and all(not c.closed for c in hub.clients)
    assert ws.events() == [{"type": "settings.changed", "keys": big}]


def test_client_hanging_up_is_forgotten(world):
    bus, _, hub, connect = world
    ws = connect("admin")
    assert len(hub.clients) == 1
    ws.hang_up()
    settle()
    assert hub.clients == set()
    bus.emit("settings.changed", keys=["late"])
    hub.flush()
    settle()
    assert ws.events() == []


# ---- pacing: the flush loop running ------------------------------------------------------------
class TimedSocket(FakeSocket):
    """Records when each message was handed to the socket."""

    def __init__(self) -> None:
        super().__init__()
        self.sent_at: list[float] = []

    def send(self, text: str) -> None:
        super().send(text)
        self.sent_at.append(time.monotonic())


def test_a_lone_event_goes_at_once_and_batches_stay_200_ms_apart(world):
    bus, _, hub, _ = world
    ws = TimedSocket()
    gevent.spawn(hub.handle, {"wsgi.websocket": ws, "QUERY_STRING": "token=admin"}, lambda *a: None)
    settle()
    ws.push({"type": "subscribe", "topics": ["devices"]})
    settle()
    hub.start()
    gevent.sleep(0.3)  # the hub has been quiet longer than a batch interval

    emitted = time.monotonic()
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=1)
    gevent.sleep(0.02)
    assert ws.messages()[1:] == [[{"type": "device.data.updated", "deviceId": "d1", "key": "temp", "value": 1}]]
    assert ws.sent_at[-1] - emitted < 0.02  # not held for the batch tick

    # Within 200 ms of that batch: held, deduplicated, and sent 200 ms after the last batch.
    for value in (2, 3):
        bus.emit("device.data.updated", deviceId="d1", key="temp", value=value)
        bus.emit("device.data.updated", deviceId="d2", key="temp", value=value)
        gevent.sleep(0.02)
    assert len(ws.sent) == 2
    gevent.sleep(0.25)
    assert [[(e["deviceId"], e["value"]) for e in batch] for batch in ws.messages()[2:]] == [[("d1", 3), ("d2", 3)]]

    # A flood: one batch per 200 ms at most, never two closer.
    deadline = time.monotonic() + 1.0
    value = 10
    while time.monotonic() < deadline:
        value += 1
        bus.emit("device.data.updated", deviceId="d1", key="temp", value=value)
        gevent.sleep(0.005)
    gevent.sleep(0.25)
    batch_times = ws.sent_at[1:]
    gaps = [later - earlier for earlier, later in zip(batch_times, batch_times[1:])]
    assert len(batch_times) >= 6 and min(gaps) >= 0.2 - 0.002, gaps  # 2 ms: the writer greenlet's turn
    assert ws.events()[-1]["value"] == value  # the latest value, last


def test_an_event_the_encoder_refuses_does_not_drop_the_batch(world):
    bus, _, hub, connect = world
    admin = connect("admin", "devices", "equipments")
    standard = connect("standard", "devices", "equipments")
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=20)
    bus.emit("equipment.data.changed", equipmentId="e1", alias="level", value=1 << 64)  # beyond orjson's 64 bits
    bus.emit("device.data.updated", deviceId="d2", key="text", value="\ud800")  # a lone surrogate
    bus.emit("device.data.updated", deviceId="d3", key="temp", value=21)
    hub.flush()
    settle()
    for ws in (admin, standard):
        events = ws.events()
        assert [(e.get("deviceId") or e.get("equipmentId")) for e in events] == ["d1", "e1", "d2", "d3"]
        assert events[0]["value"] == 20 and events[3]["value"] == 21  # the good ones as they were
        assert events[1]["value"] == str(1 << 64)  # the bad ones replaced, not the batch lost
    bus.emit("device.data.updated", deviceId="d1", key="temp", value=22)
    hub.flush()
    settle()
    assert admin.events()[-1]["value"] == 22
