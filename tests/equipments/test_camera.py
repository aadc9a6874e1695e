"""Camera snapshot and stream, proxied from a tiny HTTP server on loopback (spec, Endpoints: Equipments)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from hausbox.core.errors import ApiError, NotFound
from hausbox.devices.discovery import DataSpec
from tests.harness import free_port

FRAME = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40 + b"\xff\xd9"
BOUNDARY = "frame"
STREAM_PARTS = [b"--frame\r\nContent-Type: image/jpeg\r\n\r\n" + FRAME[:100] + b"\r\n" for _ in range(5)]


class Camera(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/snapshot.jpg":
            self._send(200, "image/jpeg", FRAME)
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


def _camera(house, snapshot_url=None, stream_url=None, name="Porch camera", equipment_type="camera"):
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
    return house.equipment(name, equipment_type, data=data)


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
    import requests

    opened, real_get = [], requests.get

    def get(*args, **kwargs):
        opened.append(real_get(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr("requests.get", get)
    camera = _camera(house, stream_url=f"{upstream}/endless.mjpg")
    body = house.engine.camera.stream(camera).body
    started = time.monotonic()
    assert next(iter(body)) == STREAM_PARTS[0], "each part is relayed as it arrives"
    assert time.monotonic() - started < 1.0
    assert not opened[0].raw.closed
    body.close()  # the client went away
    assert opened[0].raw.closed


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
    camera = _camera(house, snapshot_url="rtsp://camera.local/live")
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
