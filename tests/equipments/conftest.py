"""In-process fixtures for the equipment features: an Engine on a temporary folder, a fake integration.

The engine is built without serving HTTP (no monkey-patching: gevent timers still run whenever the
test yields with ``gevent.sleep``). Devices come from ``FakeIntegration``, registered through the
same ``IntegrationRegistry.register`` a plugin uses.
"""

from __future__ import annotations

import json
import wsgiref.util
from io import BytesIO
from typing import Any, Iterator

import gevent
import pytest

from hausbox.config import Config
from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec
from hausbox.engine import Engine
from tests import inprocess
from tests.inprocess import settle

FAKE_ID = inprocess.FAKE_ID
MANIFEST = {"id": FAKE_ID, "name": "Fake", "version": "1.0.0", "description": "test devices", "icon": "flask", "type": "integration", "apiVersion": 2}
ON_OFF = ["ON", "OFF", "TOGGLE"]


class FakeIntegration(inprocess.FakeIntegration):
    """The shared in-process fake, silent by default (no echo) and announcing its connection."""

    def __init__(self, context: Any):
        super().__init__(context)
        self.echo = False

    def start(self) -> None:
        super().start()
        self.context.report_status("connected")


class House:
    """An engine with the fake integration, a zone, and helpers to make devices and equipments."""

    def __init__(self, engine: Engine, fake: FakeIntegration):
        self.engine = engine
        self.fake = fake
        self.zone_id = engine.zones.create("Home")["id"]
        self.events: list[dict[str, Any]] = []
        engine.bus.on_any(self.events.append)

    def device(self, source_id: str, data: list[DataSpec] = (), orders: list[OrderSpec] = (), online: bool = True, **fields: Any) -> Any:
        device = self.engine.devices.upsert_from_discovery(FAKE_ID, FAKE_ID, DiscoveredDevice(source_id, data=list(data), orders=list(orders), **fields))
        if online:
            self.engine.devices.update_status(FAKE_ID, source_id, "online")
        return device

    def report(self, source_id: str, **payload: Any) -> None:
        self.engine.devices.update_data(FAKE_ID, source_id, payload)
        settle(self.engine)

    def equipment(self, name: str, equipment_type: str, data: dict[str, Any] | None = None, orders: dict[str, Any] | None = None) -> dict[str, Any]:
        """An equipment bound by alias: ``data={"state": datum}``, ``orders={"low": order}``."""
        manager = self.engine.equipments
        body = manager.create(name, equipment_type, self.zone_id)
        for alias, datum in (data or {}).items():
            manager.add_data_binding(body["id"], datum.id, alias)
        for alias, order in (orders or {}).items():
            manager.add_order_binding(body["id"], order.id, alias)
        return manager.to_json(manager.require(body["id"]))

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == event_type]

    def api(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, dict[str, str], bytes]:
        """One request through the full WSGI app, in process: ``(status, headers, body bytes)``."""
        from hausbox.api.app import build_app

        if token is None:
            token = self.token()
        raw = json.dumps(body).encode() if body is not None else b""
        path, _, query = path.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method, "PATH_INFO": "/api/v1" + path, "QUERY_STRING": query,
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(raw)), "wsgi.input": BytesIO(raw),
            "HTTP_AUTHORIZATION": f"Bearer {token}", "REMOTE_ADDR": "127.0.0.1",
        }  # fmt: skip
        wsgiref.util.setup_testing_defaults(environ)
        answer: dict[str, Any] = {}

        def start_response(status: str, headers: list, exc_info: Any = None) -> None:
            answer["status"], answer["headers"] = int(status.split()[0]), dict(headers)

        chunks = build_app(self.engine)(environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        return answer["status"], answer["headers"], content

    _token: str | None = None

    def token(self) -> str:
        if self._token is None:
            self._token = self.engine.auth.setup("admin", "correct-horse-42", "Admin", None)["accessToken"]
        return self._token


def make_engine(data_dir: Any, order_confirm_s: float = 0.3) -> tuple[Engine, FakeIntegration]:
    engine = Engine(Config(data_dir=data_dir, log_level="warn", mdns=False, bcrypt_rounds=4, order_confirm_s=order_confirm_s, strict_events=True))
    fake = engine.integrations.register(MANIFEST, FakeIntegration)
    engine.workers.start()
    engine.integrations.start_all()
    gevent.sleep(0)  # the registry starts plugins in greenlets
    return engine, fake


@pytest.fixture
def house(tmp_path: Any) -> Iterator[House]:
    engine, fake = make_engine(tmp_path / "data")
    try:
        yield House(engine, fake)
    finally:
        engine.stop()


def relay(key: str) -> OrderSpec:
    return OrderSpec(key, "enum", None, enum_values=list(ON_OFF))


def relay_state(key: str) -> DataSpec:
    return DataSpec(key, "enum", "light_state", enum_values=["ON", "OFF"])
