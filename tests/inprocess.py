"""An Engine built in the test process, with a fake integration: for tests of the services themselves.

Nothing is monkey-patched here; gevent primitives still work, and ``gevent.sleep`` lets the
engine's greenlets run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import gevent

from hausbox.config import Config
from hausbox.core.clock import ManualClock
from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec
from hausbox.engine import Engine
from hausbox.integrations.api import IntegrationContext, SettingDef

FAKE_ID = "fake"


class FakeIntegration:
    """Connected at once; records orders; can fail them, wait like a broker client waiting for its
    acknowledgement (``ack_delay_s``), and echo them back as a real device would: during the send,
    or later (``echo_delay_s``), under another key (``echo_keys``), or not at all (``echo``)."""

    id, name, description, icon, api_version = FAKE_ID, "Fake", "test integration", "flask", 2

    def __init__(self, context: IntegrationContext):
        self.context = context
        self.sent: list[tuple[str, str, Any]] = []  # (source device id, order key, value)
        self.fail_next = 0  # the next N orders fail before being sent
        self.fail_keys: set[str] = set()  # orders on these keys are sent, then fail
        self.ack_delay_s = 0.0
        self.echo = True
        self.echo_delay_s: float | None = None  # None: the echo arrives during the send
        self.echo_keys: dict[str, str] = {}  # order key -> data key (default: the same key)
        self.connected = True
        self.settle: Callable[[], None] = lambda: None  # set by build_engine

    def settings_schema(self) -> list[SettingDef]:
        return [SettingDef("token", "Token", "password")]

    def is_configured(self) -> bool:
        return True

    def start(self) -> None:
        self.connected = True

    def stop(self) -> None:
        self.connected = False

    def status(self) -> str:
        return "connected" if self.connected else "disconnected"

    def execute_order(self, device: Any, order_key: str, value: Any) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("radio jammed")
        self.sent.append((device.source_device_id, order_key, value))
        if self.ack_delay_s:
            gevent.sleep(self.ack_delay_s)
        if order_key in self.fail_keys:
            raise RuntimeError(f"{order_key} refused")
        if self.echo:
            payload = {self.echo_keys.get(order_key, order_key): value}
            if self.echo_delay_s is None:
                self.context.devices.update_data(device.source_device_id, payload)
            else:
                gevent.spawn_later(self.echo_delay_s, self.context.devices.update_data, device.source_device_id, payload)

    # helpers for tests
    def discover(self, source_id: str, data: list[DataSpec], orders: list[OrderSpec] | None = None, **fields: Any):
        found = DiscoveredDevice(source_device_id=source_id, data=data, orders=orders or [], **fields)
        device = self.context.devices.upsert_from_discovery("fake", found)
        self.settle()
        return device

    def report(self, source_id: str, payload: dict[str, Any]) -> None:
        """The device reports ``payload``; returns once the workers have handled what it caused."""
        self.context.devices.update_data(source_id, payload)
        self.settle()


def build_engine(data_dir: Path, clock: Any = None, **config: Any) -> tuple[Engine, FakeIntegration]:
    """An engine on ``data_dir`` (a ``ManualClock`` may drive its time) with the fake integration."""
    engine = Engine(Config(data_dir=data_dir, log_level="warn", mdns=False, bcrypt_rounds=4, strict_events=True, **config), clock=clock)
    fake = engine.integrations.register({"id": FAKE_ID, "name": "Fake", "version": "1.0.0"}, FakeIntegration)
    engine.workers.start()
    fake.settle = lambda: settle(engine)
    if isinstance(clock, ManualClock):
        clock.after_fire = fake.settle
    return engine, fake


def start(engine: Engine) -> None:
    """Start the engine and let the workers handle ``system.started``."""
    engine.start()
    settle(engine)


def settle(engine: Engine) -> None:
    """Let every worker run what the test caused (the bus hands their events over asynchronously)."""
    gevent.sleep(0)
    assert engine.workers.drain(5), "a worker did not drain within 5 s"


def light_specs() -> tuple[list[DataSpec], list[OrderSpec]]:
    return (
        [DataSpec("state", "enum", "light_state", enum_values=["ON", "OFF"]), DataSpec("brightness", "number", "light_brightness")],
        [OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF", "TOGGLE"]), OrderSpec("brightness", "number", "set_brightness", min=0, max=254)],
    )


class Recorder:
    """Every bus event, in order."""

    def __init__(self, engine: Engine):
        self.events: list[dict[str, Any]] = []
        engine.bus.on_any(self.events.append)

    def of(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == event_type]

    def types(self) -> list[str]:
        return [e["type"] for e in self.events if e["type"] not in ("log.entry", "device.heartbeat")]

    def clear(self) -> None:
        self.events.clear()
