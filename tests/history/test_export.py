"""history/export: the InfluxDB export, against a real influxd (1.x) and a rude fake of a 2.x server."""

from __future__ import annotations

import logging
import socket
import threading
import time
from datetime import timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import gevent
import pytest

from hausbox.core import database
from hausbox.core import settings as settings_module
from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.errors import BadRequest
from hausbox.core.settings import SettingsStore
from hausbox.core.workers import Workers
from hausbox.history.export import ALARM_ID, FILE_NAME, InfluxExport
from hausbox.history.lineprotocol import encode
from hausbox.system.alarms import Alarms
from tests.history import influx
from tests.history.influx import ADMIN, Influxd

needs_influxd = pytest.mark.skipif(not influx.available(), reason="influxd not installed: `make test-deps` installs Debian's influxdb (1.x)")
T0 = 1_760_000_000_000  # the points' own timestamps (ms)
DB = "home"
TOKEN = "tok-3f9a secret"


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        gevent.sleep(0.02)


def points(n: int, start: int = 0, equipment: str = "eq-1"):
    return [(equipment, "temperature", "temperature", "zone-1", "sensor", T0 + i, 20.0 + i / 10) for i in range(start, start + n)]


@pytest.fixture
def rig(tmp_path):
    """A real settings store, alarms, clock and workers; ``make()`` builds an exporter on ``tmp_path/data``."""
    bus = EventBus()
    db = database.open_database(tmp_path / "main.db", [settings_module.define_entities])
    settings = SettingsStore(db, bus)
    alarms = Alarms(bus)
    workers = Workers(bus)
    workers.start()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    made: list[InfluxExport] = []

    def make(**options) -> InfluxExport:
        options = {"backoff_s": (0.05, 0.2), "timeout_s": 2.0, "alarm_after_s": 0.3, **options}
        export = InfluxExport(settings, workers.create(f"history-export-{len(made)}"), Clock(timezone.utc), data_dir, alarms, **options)
        export.start()
        made.append(export)
        return export

    def settle() -> None:
        assert workers.drain(10)

    yield SimpleNamespace(settings=settings, alarms=alarms, workers=workers, make=make, settle=settle, data_dir=data_dir, bus=bus)
    for export in made:
        export.stop()
    workers.stop(1)
    for export in made:
        export.final_write()
    db.disconnect()


@pytest.fixture
def influxd(tmp_path):
    server = Influxd(tmp_path / "influxd").start()
    server.create_database(DB)
    yield server
    server.stop()


def configure_v1(rig, url: str, **extra) -> None:
    rig.settings.set_many({"history.influx.enabled": True, "history.influx.url": url, "history.influx.version": 1, "history.influx.database": DB, **extra})


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# ---- line protocol and settings (no server) ----------------------------------------------------------
def test_line_protocol_escapes_tags_and_strings_and_types_the_fields():
    assert encode(("eq 1", "a,b=c", None, "", "t", 5, 21.5)) == r"equipment_data,alias=a\,b\=c,equipmentId=eq\ 1,type=t value_number=21.5 5"
    assert encode(("e", "on", None, None, None, 7, True)) == 'equipment_data,alias=on,equipmentId=e value_number=1.0,value_string="true" 7'
    assert encode(("e", "on", None, None, None, 7, False)).endswith('value_number=0.0,value_string="false" 7')
    assert encode(("e", "msg", None, None, None, 8, 'say "hi" \\ bye')) == r'equipment_data,alias=msg,equipmentId=e value_string="say \"hi\" \\ bye" 8'
    assert encode(("e", "n", None, None, None, 9, 3)) == "equipment_data,alias=n,equipmentId=e value_number=3.0 9"
    assert encode(("e", "n", None, None, None, 9, float("nan"))) is None  # InfluxDB cannot store it
    assert encode(("e", "x\\", None, None, None, 1, 1.0)).startswith("equipment_data,alias=x,")  # 1.x refuses a trailing backslash


def test_bad_settings_are_refused(rig):
    rig.make()
    for key, value in [("enabled", "yes"), ("url", "ftp://x"), ("url", "http://"), ("url", "influx:8086"), ("version", 3), ("version", True), ("database", 5)]:
        with pytest.raises(BadRequest, match=f"history.influx.{key}"):
            rig.settings.set(f"history.influx.{key}", value)
    rig.settings.set_many({"history.influx.url": "https://influx.example:8086/", "history.influx.version": 2, "history.influx.token": "t"})


def test_while_off_or_unconfigured_points_are_dropped_at_once(rig):
    export = rig.make()
    export.add(points(3))
    rig.settings.set_many({"history.influx.enabled": True, "history.influx.url": closed_port_url()})  # no database yet
    export.add(points(3))
    rig.settle()
    status = export.status()
    assert status["queued"] == 0 and status["configured"] is False and status["enabled"] is True and status["version"] is None


# ---- against a real influxd ---------------------------------------------------------------------------
@needs_influxd
def test_points_arrive_with_their_tags_fields_and_ms_timestamps(rig, influxd):
    configure_v1(rig, influxd.url)
    export = rig.make()
    tricky = 'a b,c=d "q" \\e'
    export.add([
        ("eq-1", "temperature", "temperature", "zone-1", "sensor", T0 + 1, 21.5),
        ("eq 2,=", tricky, None, "", "light", T0 + 2, True),
        ("eq-3", "state", "mode", "zone-1", None, T0 + 3, tricky),
        ("eq-3", "count", "mode", "zone-1", None, T0 + 4, 7),
    ])  # fmt: skip
    wait_until(lambda: export.status()["sent24h"] == 4)
    rows = influxd.rows(DB)
    assert [r["time"] for r in rows] == [T0 + 1, T0 + 2, T0 + 3, T0 + 4]
    assert rows[0] == {
        "time": T0 + 1, "alias": "temperature", "category": "temperature", "equipmentId": "eq-1", "type": "sensor", "zoneId": "zone-1",
        "value_number": 21.5, "value_string": None,
    }  # fmt: skip
    assert rows[1]["equipmentId"] == "eq 2,=" and rows[1]["alias"] == tricky
    assert rows[1]["category"] is None and rows[1]["zoneId"] is None  # None and "" tags left out
    assert rows[1]["value_number"] == 1 and rows[1]["value_string"] == "true"
    assert rows[2]["value_string"] == tricky and rows[2]["value_number"] is None and rows[2]["type"] is None
    assert rows[3]["value_number"] == 7.0
    status = export.status()
    assert status == {
        "configured": True, "enabled": True, "connected": True, "version": 1, "url": influxd.url, "queued": 0, "sent24h": 4, "dropped": 0,
        "rejected": 0, "lastError": None, "lastSentAt": status["lastSentAt"],
    }  # fmt: skip
    assert status["lastSentAt"].endswith("Z")


@needs_influxd
def test_username_and_password_are_used_and_never_shown(tmp_path, rig, caplog):
    server = Influxd(tmp_path / "auth", auth=True).start()
    try:
        server.create_database(DB)
        caplog.set_level(logging.DEBUG)
        configure_v1(rig, server.url, **{"history.influx.username": ADMIN[0], "history.influx.password": "wrong-pw"})
        export = rig.make()
        export.add(points(5))
        wait_until(lambda: export.status()["lastError"] is not None)
        status = export.status()
        assert status["lastError"].startswith("HTTP 401") and status["queued"] == 5 and status["connected"] is False  # kept
        rig.settings.set("history.influx.password", ADMIN[1])  # live: no restart
        wait_until(lambda: export.status()["queued"] == 0)
        assert len(server.rows(DB)) == 5
        assert "wrong-pw" not in caplog.text and ADMIN[1] not in caplog.text
    finally:
        server.stop()


@needs_influxd
def test_a_server_stopped_mid_stream_gets_every_point_exactly_once_when_it_returns(rig, influxd):
    configure_v1(rig, influxd.url)
    export = rig.make(batch_lines=50)
    raised, resolved = [], []
    rig.bus.on("system.alarm.raised", raised.append)
    rig.bus.on("system.alarm.resolved", resolved.append)
    total = 0
    for round_ in range(30):
        if round_ == 10:
            influxd.stop()
        if round_ == 25:
            assert export.status()["connected"] is False and export.status()["queued"] > 0
            influxd.start()
        export.add(points(40, start=total))
        total += 40
        gevent.sleep(0.05)
    wait_until(lambda: export.status()["queued"] == 0)
    rows = influxd.rows(DB)
    assert [r["time"] for r in rows] == [T0 + i for i in range(total)]  # all there, once each, in order
    assert export.status()["sent24h"] == total and export.status()["connected"] is True
    assert [a["alarmId"] for a in raised] == [ALARM_ID] and [a["alarmId"] for a in resolved] == [ALARM_ID]
    assert not rig.alarms.is_active(ALARM_ID)


@needs_influxd
def test_the_queue_is_bounded_the_oldest_go_and_are_counted(rig, influxd):
    configure_v1(rig, closed_port_url())
    export = rig.make(max_queued=100)
    export.add(points(60))
    export.add(points(90, start=60))
    rig.settle()
    assert export.status()["queued"] == 100 and export.status()["dropped"] == 50
    rig.settings.set("history.influx.url", influxd.url)  # the server is found: what is left arrives
    wait_until(lambda: export.status()["queued"] == 0)
    assert [r["time"] for r in influxd.rows(DB)] == [T0 + i for i in range(50, 150)]
    assert export.status()["dropped"] == 50


@needs_influxd
def test_a_restarted_exporter_sends_what_was_queued_before(rig, influxd):
    configure_v1(rig, closed_port_url())
    first = rig.make(max_queued=1000)
    first.add(points(30))
    rig.settle()
    first.stop()
    first.add(points(5, start=30))  # the shutdown's last commit, after the workers stopped
    first.final_write()
    rig.settings.set("history.influx.url", influxd.url)
    second = rig.make()
    assert second.status()["queued"] == 35
    wait_until(lambda: second.status()["queued"] == 0)
    assert len(influxd.rows(DB)) == 35
    assert (rig.data_dir / FILE_NAME).exists()


# ---- the 2.x path, against a fake that checks what it is sent ------------------------------------------
class FakeInflux2:
    """Answers /api/v2/write with the next of ``answers`` (204 once they run out): a status code,
    "hang" (answers nothing for ``hang_s``) or "close" (drops the connection)."""

    def __init__(self, hang_s: float = 1.0):
        self.answers: list[int | str] = []
        self.received: list[tuple[str, dict, str, str]] = []  # path, query, Authorization, body
        self.hang_s = hang_s
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                url = urlsplit(self.path)
                answer = fake.answers.pop(0) if fake.answers else 204
                ok = url.path == "/api/v2/write" and parse_qs(url.query) == {"org": ["acme"], "bucket": ["house"], "precision": ["ms"]}
                if ok and self.headers.get("Authorization") != f"Token {TOKEN}":
                    answer = 401
                if not ok:
                    answer = 404
                if answer == "hang":
                    time.sleep(fake.hang_s)
                    return
                if answer == "close":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if answer == 204:
                    fake.received.append((url.path, parse_qs(url.query), self.headers.get("Authorization"), body))
                self.send_response(answer)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def do_GET(self):  # noqa: N802
                self.send_response(204 if self.path == "/ping" else 404)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def lines(self) -> list[str]:
        return [line for *_, body in self.received for line in body.split("\n")]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake2():
    fake = FakeInflux2()
    yield fake
    fake.close()


def configure_v2(rig, url: str, token: str = TOKEN) -> None:
    rig.settings.set_many({
        "history.influx.enabled": True, "history.influx.url": url, "history.influx.version": 2, "history.influx.org": "acme",
        "history.influx.bucket": "house", "history.influx.token": token,
    })  # fmt: skip


def test_2x_writes_with_org_bucket_and_token(rig, fake2, caplog):
    caplog.set_level(logging.DEBUG)
    configure_v2(rig, fake2.url)
    export = rig.make()
    export.add(points(3))
    wait_until(lambda: export.status()["sent24h"] == 3)
    assert fake2.received[0][:3] == ("/api/v2/write", {"org": ["acme"], "bucket": ["house"], "precision": ["ms"]}, f"Token {TOKEN}")
    assert fake2.lines() == [encode(p) for p in points(3)]
    assert export.status()["version"] == 2 and export.status()["connected"] is True
    assert TOKEN not in caplog.text and TOKEN not in str(export.status())


def test_2x_a_refused_token_keeps_the_points_until_it_is_fixed(rig, fake2, caplog):
    configure_v2(rig, fake2.url, token="stale-token")
    export = rig.make()
    export.add(points(4))
    wait_until(lambda: export.status()["lastError"] is not None)
    assert export.status()["lastError"].startswith("HTTP 401") and export.status()["queued"] == 4
    assert "stale-token" not in caplog.text and "stale-token" not in str(export.status())
    rig.settings.set("history.influx.token", TOKEN)
    wait_until(lambda: export.status()["queued"] == 0)
    assert len(fake2.lines()) == 4


def test_2x_server_errors_hangs_and_dropped_connections_are_retried(rig, fake2):
    fake2.answers = [500, "hang", "close", 503]
    configure_v2(rig, fake2.url)
    export = rig.make(timeout_s=0.3)
    export.add(points(6))
    rig.settle()
    errors = set()
    wait_until(lambda: errors.add(export.status()["lastError"]) or export.status()["queued"] == 0)
    assert fake2.lines() == [encode(p) for p in points(6)]  # once each, after four failed attempts
    assert {"HTTP 500: {}", "no answer within 0.3 s", "HTTP 503: {}"} <= errors
    assert export.status()["lastError"] is None


def test_2x_a_malformed_batch_is_dropped_so_the_next_ones_go(rig, fake2):
    fake2.answers = [400]
    configure_v2(rig, fake2.url)
    export = rig.make(batch_lines=2)
    export.add(points(5))
    rig.settle()
    wait_until(lambda: export.status()["queued"] == 0)
    assert export.status()["rejected"] == 2
    assert fake2.lines() == [encode(p) for p in points(3, start=2)]
