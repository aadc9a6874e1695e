"""Camera snapshot and stream, proxied from a tiny HTTP server on loopback (spec, Endpoints: Equipments).

Loopback is the box itself, which the proxy refuses: the homes here let 127.0.0.1 through with the
``camera_local_addresses`` setting (``HAUSBOX_CAMERA_LOCAL_ADDRESSES``), except where a test shows
the refusal. A URL is fetched once approved in ``camera.<equipment id>.snapshotUrl|streamUrl``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Iterator

import gevent
import pytest
from gevent.queue import Queue

from hausbox.core.errors import ApiError, NotFound
from hausbox.devices.discovery import DataSpec
from hausbox.equipments.camera import SNAPSHOT_ALIAS, STREAM_ALIAS, approval_key
from tests.harness import PASSWORD, free_port

FRAME = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40 + b"\xff\xd9"
BOUNDARY = "frame"
STREAM_PARTS = [b"--frame\r\nContent-Type: image/jpeg\r\n\r\n" + FRAME[:100] + b"\r\n" for _ in range(5)]


SEEN: list[tuple[str, str | None]] = []  # (path, Authorization) of every request the camera got


class Camera(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        SEEN.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/snapshot.jpg"):
            self._send(200, "image/jpeg", FRAME)
        elif self.path in ("/moved", "/elsewhere"):  # to the same origin, or to localhost: another host name
            port = self.server.server_address[1]
            self.send_response(302)
            self.send_header("Location", "/snapshot.jpg" if self.path == "/moved" else f"http://localhost:{port}/snapshot.jpg")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/slow.jpg":  # a byte every 50 ms
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for byte in FRAME[:100]:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
        elif self.path == "/broken":
            self._send(500, "text/plain", b"sensor error")
        elif self.path == "/stream.mjpg":
            self.send_response(200)
            self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            self.end_headers()
            for part in STREAM_PARTS:
                self.wfile.write(part)
                self.wfile.flush()
        elif self.path == "/endless.mjpg":  # one part at a time until the client hangs up
            self.send_response(200)
            self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(STREAM_PARTS[0])
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
        else:
            self._send(404, "text/plain", b"no such path")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Camera)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def house(make_house):
    """The equipment tests' home, with the camera on loopback let through."""
    return make_house(echo=False, order_confirm_s=0.3, start_integrations=True, zone="Home", camera_local_addresses=("127.0.0.1",))


def _camera(house, snapshot_url=None, stream_url=None, name="Porch camera", equipment_type="camera", approve=True):
    """A camera equipment whose device reports these URLs; approved by an administrator unless told."""
    source = name.lower().replace(" ", "-")
    device = house.device(source, data=[DataSpec("snapshot_url", "text"), DataSpec("stream_url", "text"), DataSpec("motion", "boolean", "motion")])
    payload = {k: v for k, v in (("snapshot_url", snapshot_url), ("stream_url", stream_url)) if v is not None}
    if payload:
        house.report(source, **payload)
    data = {"motion": device.data["motion"]}
    if snapshot_url is not None:
        data["snapshot_url"] = device.data["snapshot_url"]
    if stream_url is not None:
        data["stream_url"] = device.data["stream_url"]
    camera = house.equipment(name, equipment_type, data=data)
    if approve and equipment_type == "camera":
        approvals = {approval_key(camera, alias): url for alias, url in payload.items()}
        status, _, body = house.api("PUT", "/settings", approvals)
        assert status == 200, body
    return camera


def test_snapshot_is_proxied_with_its_content_type(house, upstream):
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg")
    response = house.engine.camera.snapshot(camera)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "image/jpeg"
    assert response.body == FRAME


def test_snapshot_through_the_route(house, upstream):
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg")
    status, headers, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and body == FRAME


def test_stream_is_relayed_as_it_comes(house, upstream):
    camera = _camera(house, stream_url=f"{upstream}/stream.mjpg")
    response = house.engine.camera.stream(camera)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == f"multipart/x-mixed-replace; boundary={BOUNDARY}"
    assert b"".join(response.body) == b"".join(STREAM_PARTS)
    status, headers, body = house.api("GET", f"/equipments/{camera}/camera/stream")
    assert status == 200 and headers["Content-Type"].startswith("multipart/x-mixed-replace") and body == b"".join(STREAM_PARTS)


def test_closing_the_stream_early_closes_the_upstream(house, upstream, monkeypatch):
    from hausbox.equipments import camera as camera_module

    opened, real_open = [], camera_module.open_camera

    def spy(*args, **kwargs):
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(camera_module, "open_camera", spy)
    camera = _camera(house, stream_url=f"{upstream}/endless.mjpg")
    body = house.engine.camera.stream(camera).body
    started = time.monotonic()
    assert next(iter(body)) == STREAM_PARTS[0], "each part is relayed as it arrives"
    assert time.monotonic() - started < 1.0
    assert not opened[0].closed
    body.close()  # the client went away
    assert opened[0].closed


def test_missing_bindings_are_404(house, upstream):
    snapshot_only = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg")
    with pytest.raises(NotFound):
        house.engine.camera.stream(snapshot_only)
    status, _, body = house.api("GET", f"/equipments/{snapshot_only}/camera/stream")
    assert status == 404 and "stream_url" in json.loads(body)["error"]
    bare = _camera(house, name="Bare camera")
    status, _, body = house.api("GET", f"/equipments/{bare}/camera/snapshot")
    assert status == 404 and json.loads(body)["error"]
    status, _, _ = house.api("GET", "/equipments/00000000-0000-4000-8000-00000000dead/camera/snapshot")
    assert status == 404


def test_only_camera_equipments_have_a_camera(house, upstream):
    sensor = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", name="Doorbell", equipment_type="sensor")
    status, _, _ = house.api("GET", f"/equipments/{sensor}/camera/snapshot")
    assert status == 404


@pytest.mark.parametrize("path", ["/broken", "/missing"])
def test_an_upstream_error_is_502(house, upstream, path):
    camera = _camera(house, snapshot_url=f"{upstream}{path}", stream_url=f"{upstream}{path}")
    for what in ("snapshot", "stream"):
        status, _, body = house.api("GET", f"/equipments/{camera}/camera/{what}")
        assert status == 502 and json.loads(body)["error"]


def test_an_unreachable_camera_is_502_without_leaking_its_url(house):
    url = f"http://admin:hunter2@127.0.0.1:{free_port()}/snapshot.jpg"
    camera = _camera(house, snapshot_url=url)
    status, _, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 502 and b"hunter2" not in body


def test_a_value_that_is_no_http_url_is_502(house):
    camera = _camera(house, snapshot_url="rtsp://camera.local/live", approve=False)
    with pytest.raises(ApiError) as failed:
        house.engine.camera.snapshot(camera)
    assert failed.value.status == 502


def test_snapshots_are_capped(house, upstream):
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg")
    house.engine.camera.snapshot_max_bytes = len(FRAME) - 1
    status, _, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 502 and "larger" in json.loads(body)["error"]
    house.engine.camera.snapshot_max_bytes = len(FRAME)
    status, _, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 200 and body == FRAME


# ---- what the proxy may fetch ----------------------------------------------------------------------


def _error(response) -> str:
    status, _, body = response
    return f"{status} {json.loads(body)['error']}"


def test_loopback_is_refused_without_the_setting(make_house, upstream):
    house = make_house(start_integrations=True, zone="Home")  # no camera_local_addresses
    port = upstream.rsplit(":", 1)[1]
    for url in (f"{upstream}/snapshot.jpg", f"http://localhost:{port}/snapshot.jpg", f"http://[::ffff:127.0.0.1]:{port}/snapshot.jpg"):
        SEEN.clear()
        camera = _camera(house, snapshot_url=url, name=f"Camera {len(url)}")
        answer = _error(house.api("GET", f"/equipments/{camera}/camera/snapshot"))
        assert answer.startswith("502 ") and "box itself" in answer, answer
        assert SEEN == [], "nothing is sent to a refused address"


@pytest.mark.parametrize("address", ["127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "0.1.2.3", "::", "::ffff:127.0.0.1", "169.254.169.254", "fe80::1", "224.0.0.1", "255.255.255.255"])
def test_addresses_of_the_box_and_link_local_are_refused(address):
    from hausbox.equipments.camera_fetch import refusal

    assert refusal(address) is not None
    assert refusal("192.168.1.20") is None and refusal("10.0.0.7") is None, "cameras on the LAN are fetched"


def test_the_address_of_an_own_interface_is_refused():
    import socket

    from hausbox.equipments.camera_fetch import refusal

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # picks the outgoing interface; sends nothing
        except OSError:
            pytest.skip("no IPv4 route on this machine")
        own = probe.getsockname()[0]
    assert refusal(own) is not None


def test_the_host_is_resolved_once_and_the_checked_address_connected(house, upstream, monkeypatch):
    import socket

    port = int(upstream.rsplit(":", 1)[1])
    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))], [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]])
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: next(answers))
    camera = _camera(house, snapshot_url=f"http://camera.example:{port}/snapshot.jpg")
    status, _, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 200 and body == FRAME, "connected to the address that was checked, the name not looked up again"


def test_a_redirect_is_followed_only_to_the_same_host(house, upstream):
    SEEN.clear()
    moved = _camera(house, snapshot_url=f"{upstream}/moved")
    status, _, body = house.api("GET", f"/equipments/{moved}/camera/snapshot")
    assert status == 200 and body == FRAME and [path for path, _ in SEEN] == ["/moved", "/snapshot.jpg"]
    SEEN.clear()
    elsewhere = _camera(house, snapshot_url=f"{upstream}/elsewhere", name="Side camera")
    answer = _error(house.api("GET", f"/equipments/{elsewhere}/camera/snapshot"))
    assert answer.startswith("502 ") and "another host" in answer
    assert [path for path, _ in SEEN] == ["/elsewhere"], "the redirect is not followed"


def test_an_unapproved_url_is_not_fetched(house, upstream):
    SEEN.clear()
    unapproved = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", approve=False)
    answer = _error(house.api("GET", f"/equipments/{unapproved}/camera/snapshot"))
    assert answer.startswith("403 ") and approval_key(unapproved, SNAPSHOT_ALIAS) in answer
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", name="Gate camera")
    assert house.api("GET", f"/equipments/{camera}/camera/snapshot")[0] == 200
    SEEN.clear()
    house.report("gate-camera", snapshot_url=f"{upstream}/snapshot.jpg?other")  # the device changes its mind
    assert _error(house.api("GET", f"/equipments/{camera}/camera/snapshot")).startswith("403 ")
    assert SEEN == []
    stream = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", stream_url=f"{upstream}/stream.mjpg", name="Back camera", approve=False)
    house.api("PUT", "/settings", {approval_key(stream, SNAPSHOT_ALIAS): f"{upstream}/snapshot.jpg"})
    assert house.api("GET", f"/equipments/{stream}/camera/stream")[0] == 403, "an approval is for one URL of one equipment"
    assert SEEN == []


def test_the_masked_form_approves_and_the_approval_survives_a_restart(house, upstream):
    url = f"http://admin:hunter2@{upstream.split('://')[1]}/snapshot.jpg"
    camera = _camera(house, snapshot_url=url, approve=False)
    shown = house.equipment_json(camera)["data"]["snapshot_url"]
    assert "hunter2" not in shown and "***@" in shown
    assert house.api("PUT", "/settings", {approval_key(camera, SNAPSHOT_ALIAS): shown})[0] == 200
    house.restart()
    SEEN.clear()
    status, _, body = house.api("GET", f"/equipments/{camera}/camera/snapshot")
    assert status == 200 and body == FRAME
    assert SEEN == [("/snapshot.jpg", "Basic YWRtaW46aHVudGVyMg==")], "the device's credentials, kept across the restart, are sent"


@pytest.mark.parametrize(
    "key, value",
    [("{id}.snapshotUrl", "ftp://camera/snap.jpg"), ("{id}.snapshotUrl", "http://"), ("{id}.snapshotUrl", 42),
     ("{id}.snapshotUrl", "http://camera:99999/snap.jpg"), ("{id}.other", "http://camera/snap.jpg"),
     ("{sensor}.snapshotUrl", "http://camera/snap.jpg"), ("00000000-0000-4000-8000-00000000dead.streamUrl", "http://camera/"), ("{id}", "http://camera/")],
)  # fmt: skip
def test_a_bad_approval_is_400_and_stores_nothing(house, upstream, key, value):
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", approve=False)
    sensor = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", name="Doorbell", equipment_type="sensor")
    key = "camera." + key.format(id=camera, sensor=sensor)
    status, _, body = house.api("PUT", "/settings", {key: value, "ui.theme": "dark"})
    assert status == 400 and key in json.loads(body)["error"]
    assert house.engine.settings.get(key) is None and house.engine.settings.get("ui.theme") is None


def test_deleting_the_camera_drops_its_approvals(house, upstream):
    camera = _camera(house, snapshot_url=f"{upstream}/snapshot.jpg", stream_url=f"{upstream}/stream.mjpg")
    assert house.api("DELETE", f"/equipments/{camera}")[0] == 204
    assert house.engine.settings.with_prefix(f"camera.{camera}.") == {}


# ---- size and time bounds ----------------------------------------------------------------------------


def test_a_slow_snapshot_is_cut_at_its_deadline(house, upstream):
    camera = _camera(house, snapshot_url=f"{upstream}/slow.jpg")
    house.engine.camera.snapshot_deadline_s = 0.3
    started = time.monotonic()
    answer = _error(house.api("GET", f"/equipments/{camera}/camera/snapshot"))
    assert answer.startswith("502 ") and "too long" in answer
    assert time.monotonic() - started < 1.5


def test_a_stream_is_bounded_in_bytes_and_time(house, upstream):
    camera = _camera(house, stream_url=f"{upstream}/endless.mjpg")
    house.engine.camera.stream_max_bytes = 250
    assert len(b"".join(house.engine.camera.stream(camera).body)) == 250
    house.engine.camera.stream_max_bytes, house.engine.camera.stream_max_s = 1 << 30, 0.3
    started = time.monotonic()
    relayed = b"".join(house.engine.camera.stream(camera).body)
    assert relayed and time.monotonic() - started < 1.5


# ---- credentials in URLs -------------------------------------------------------------------------------


SECRET_URL = "http://admin:hunter2@192.168.1.20/snapshot.jpg?user=admin&pwd=hunter3"


def _standard_token(house) -> str:
    body = {"username": "guest", "password": PASSWORD, "displayName": "Guest", "role": "standard"}
    assert house.api("POST", "/users", body)[0] == 201
    return house.engine.auth.login("guest", PASSWORD)["accessToken"]


def test_credentials_in_urls_are_masked_in_every_rest_read(house):
    camera = _camera(house, snapshot_url=SECRET_URL, approve=False)
    device = house.engine.devices.all()[0].id
    for token in (_standard_token(house), house.token()):
        for path in ("/devices", f"/devices/{device}", "/equipments", f"/equipments/{camera}", "/equipments?type=camera", "/activity"):
            status, _, body = house.api("GET", path, token=token)
            assert status == 200 and b"hunter" not in body, path
        assert b"http://***@192.168.1.20/snapshot.jpg?user=admin&pwd=***" in house.api("GET", f"/equipments/{camera}", token=token)[2]


def test_credentials_in_urls_are_masked_in_events_and_on_the_websocket(house):
    socket = FakeSocket()
    token = _standard_token(house)
    client = gevent.spawn(house.engine.hub.handle, {"wsgi.websocket": socket, "QUERY_STRING": f"token={token}"}, lambda *a: None)
    socket.inbox.put(json.dumps({"type": "subscribe", "topics": ["devices", "equipments", "zones", "activity"]}))
    gevent.sleep(0.05)
    _camera(house, snapshot_url=SECRET_URL, approve=False)
    house.report("porch-camera", snapshot_url=SECRET_URL.replace("snapshot", "snap2"))  # reaches the equipment too
    house.engine.hub.flush()
    gevent.sleep(0.05)
    sent = "".join(socket.sent)
    assert "http://***@192.168.1.20/snap2.jpg?user=admin&pwd=***" in sent and "hunter" not in sent
    for event_type in ("device.data.updated", "equipment.data.changed"):
        assert house.events(event_type) and "hunter" not in json.dumps(house.events(event_type))
    socket.inbox.put(None)
    client.join(2)


def test_credentials_in_urls_never_reach_the_logs(house, upstream, caplog):
    caplog.set_level(logging.DEBUG)
    camera = _camera(house, snapshot_url=SECRET_URL.replace("192.168.1.20", f"127.0.0.1:{free_port()}"))
    house.report("porch-camera", snapshot_url=SECRET_URL)
    house.engine.camera.snapshot_max_bytes = 1
    assert house.api("GET", f"/equipments/{camera}/camera/snapshot")[0] in (403, 502)
    assert "camera." in caplog.text and "***" in caplog.text, "the approval was logged, masked"
    assert "hunter" not in caplog.text


class FakeSocket:
    """What the hub uses of a gevent-websocket socket."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.inbox: Queue = Queue()
        self.handler = SimpleNamespace(socket=SimpleNamespace(shutdown=lambda how: None, close=lambda: None))

    def send(self, text: str) -> None:
        self.sent.append(text)

    def receive(self) -> str | None:
        return self.inbox.get()

    def close(self, code: int, message: object = b"") -> None:
        self.inbox.put(None)
