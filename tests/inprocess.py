"""The in-process harness: an Engine built in the test process with a fake integration, no HTTP server.

One class, ``House``, for every such test (the ``make_house`` and ``house`` fixtures of
``tests/conftest.py`` build it): the engine, the fake integration, a recorder of every bus event and,
when the test sets a start time, a ``ManualClock``; helpers to make zones, devices and equipments, to
make devices report, to move the clock, to restart on the same data, and to call the HTTP API in
process. Nothing is monkey-patched: gevent primitives still work, and ``gevent.sleep`` lets the
engine's greenlets run.
"""

from __future__ import annotations

import json
import wsgiref.util
from datetime import datetime, tzinfo
from io import BytesIO
from pathlib import Path
from typing import Any, Callable, Iterable
from zoneinfo import ZoneInfo

import gevent

from hausbox.config import Config
from hausbox.core.clock import ManualClock
from hausbox.core.errors import NotFound
from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec
from hausbox.engine import Engine
from hausbox.integrations.api import IntegrationContext, SettingDef
from hausbox.zones.tree import ROOT_ID
from tests.harness import PASSWORD

FAKE_ID = "fake"
MANIFEST = {"id": FAKE_ID, "name": "Fake", "version": "1.0.0", "description": "test devices", "icon": "flask", "type": "integration", "apiVersion": 2}
PARIS = ZoneInfo("Europe/Paris")
ROOT = ROOT_ID  # the root zone, which every home has


def local_ms(moment: str | int | datetime, tz: tzinfo = PARIS) -> int:
    """``"2026-06-15 08:00"`` (wall time in ``tz``), an aware datetime or epoch ms -> epoch ms."""
    if isinstance(moment, int):
        return moment
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment).replace(tzinfo=tz)
    return int(moment.timestamp() * 1000)


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
        self.settle: Callable[[], None] = lambda: None  # set by the House

    def settings_schema(self) -> list[SettingDef]:
        return [SettingDef("token", "Token", "password")]

    def is_configured(self) -> bool:
        return True

    def start(self) -> None:
        self.connected = True
        self.context.report_status("connected")

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
    def discover(self, source_id: str, data: Iterable[DataSpec] = (), orders: Iterable[OrderSpec] = (), **fields: Any):
        found = DiscoveredDevice(source_device_id=source_id, data=list(data), orders=list(orders), **fields)
        device = self.context.devices.upsert_from_discovery(FAKE_ID, found)
        self.settle()
        return device

    def report(self, source_id: str, payload: dict[str, Any]) -> None:
        """The device reports ``payload``; returns once the workers have handled what it caused."""
        self.context.devices.update_data(source_id, payload)
        self.settle()


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


class StubRecipes:
    """A stand-in for the recipe service (``House(recipes=StubRecipes(...))``), for what modes and
    button actions need of it: enable, disable, update_params, get_instance; it records the calls."""

    def __init__(self, *instance_ids: str):
        self.instances: dict[str, dict[str, Any]] = {i: {"id": i, "enabled": True, "params": {}} for i in instance_ids}
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: set[str] = set()

    def get_instance(self, instance_id: str) -> dict[str, Any]:
        if instance_id not in self.instances:
            raise NotFound(f"Recipe instance not found: {instance_id}")
        return self.instances[instance_id]

    def _call(self, name: str, instance_id: str, arg: Any = None) -> None:
        self.get_instance(instance_id)
        if instance_id in self.fail:
            raise RuntimeError(f"{name} of {instance_id} failed")
        self.calls.append((name, instance_id, arg))

    def enable(self, instance_id: str) -> None:
        self._call("enable", instance_id)
        self.instances[instance_id]["enabled"] = True

    def disable(self, instance_id: str) -> None:
        self._call("disable", instance_id)
        self.instances[instance_id]["enabled"] = False

    def update_params(self, instance_id: str, params: dict[str, Any]) -> None:
        self._call("update_params", instance_id, params)
        self.instances[instance_id]["params"] = params


# ---- device specs ------------------------------------------------------------------------------------
def light_specs() -> tuple[list[DataSpec], list[OrderSpec]]:
    return (
        [DataSpec("state", "enum", "light_state", enum_values=["ON", "OFF"]), DataSpec("brightness", "number", "light_brightness")],
        [OrderSpec("state", "enum", "light_toggle", enum_values=["ON", "OFF", "TOGGLE"]), OrderSpec("brightness", "number", "set_brightness", min=0, max=254)],
    )


def relay_order(key: str) -> OrderSpec:
    return OrderSpec(key, "enum", None, enum_values=["ON", "OFF", "TOGGLE"])


def relay_state(key: str) -> DataSpec:
    return DataSpec(key, "enum", "light_state", enum_values=["ON", "OFF"])


class House:
    """An engine on ``data_dir`` with the fake integration, and what a test does with it.

    Options:
    - ``start``: ``None`` runs on the real clock; wall time (``"2026-06-15 08:00"`` in ``tz``), an
      aware datetime or epoch ms puts the engine on a ``ManualClock`` that only ``advance``/``advance_to``
      move (timers fire on the way, the workers settle after each).
    - ``tz``: the ManualClock's time zone (Europe/Paris by default).
    - ``echo``: the fake reports each order's value back as a device would (on by default).
    - ``zone``: the name of a zone to create under the root for the helpers (``zone_id``, else the root).
    - ``start_integrations``: start the integrations as the server does at boot (the fake then
      announces itself connected).
    - ``recipes``: a stand-in for ``engine.recipes`` (a ``StubRecipes``), put in at every (re)start.
    - ``services``: services started without starting the whole engine, e.g. ``["calendar"]``.
    - any other keyword is a ``Config`` field, e.g. ``order_confirm_s=0.3``.
    The engine itself is not started (``start()`` does that, as the server would).
    """

    def __init__(self, data_dir: Path, *, start: str | int | datetime | None = None, tz: tzinfo = PARIS, echo: bool = True, zone: str | None = None,
                 start_integrations: bool = False, recipes: Any = None, services: Iterable[str] = (), **config: Any):  # fmt: skip
        self.data_dir = Path(data_dir)
        self.clock = ManualClock(tz, local_ms(start, tz)) if start is not None else None
        self.stand_in_recipes = recipes
        self._options = {"echo": echo, "start_integrations": start_integrations, "services": list(services), "config": config}
        self._boot()
        self.zone_id = self.engine.zones.create(zone)["id"] if zone else self.engine.zones.root().id
        self._token: str | None = None
        self._app: tuple[Any, Any] | None = None

    def _boot(self) -> None:
        options = self._options
        config = Config(data_dir=self.data_dir, log_level="warn", mdns=False, bcrypt_rounds=4, strict_events=True, **options["config"])
        self.engine = engine = Engine(config, clock=self.clock)
        self.fake: FakeIntegration = engine.integrations.register(MANIFEST, FakeIntegration)
        self.fake.echo = options["echo"]
        self.fake.settle = self.settle
        engine.workers.start()
        if self.clock is not None:
            self.clock.after_fire = self.settle
        self.recorder = Recorder(engine)
        if options["start_integrations"]:
            engine.integrations.start_all()
            gevent.sleep(0)  # the registry starts plugins in greenlets
        self._real_recipes = None
        if self.stand_in_recipes is not None:
            self._real_recipes, engine.recipes = engine.recipes, self.stand_in_recipes
        for name in options["services"]:
            getattr(engine, name).start()
        self.stopped = False

    # ---- life --------------------------------------------------------------------------------------
    def settle(self) -> None:
        """Let every worker run what the test caused (the bus hands their events over asynchronously)."""
        gevent.sleep(0)
        assert self.engine.workers.drain(5), "a worker did not drain within 5 s"

    def start(self) -> None:
        """Start the engine as the server does, and let the workers handle ``system.started``."""
        self.engine.start()
        self.settle()

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            if self._real_recipes is not None:
                self.engine.recipes = self._real_recipes
            self.engine.stop()

    def restart(self, at: str | int | datetime | None = None) -> None:
        """Stop the engine and build a new one on the same data, not started, with a fresh fake and
        recorder: on the same clock, or on one at ``at`` (time passed while the home was down)."""
        self.stop()
        if at is not None:
            self.clock = ManualClock(self.clock.tz, local_ms(at, self.clock.tz))
        self._boot()

    # ---- things in the home ------------------------------------------------------------------------
    @property
    def recipes(self) -> Any:
        return self.engine.recipes

    def zone(self, name: str, parent: str | None = None) -> str:
        return self.engine.zones.create(name, parent)["id"]

    def device(self, source_id: str, data: Iterable[DataSpec] = (), orders: Iterable[OrderSpec] = (), online: bool = True, **fields: Any) -> Any:
        """A device the fake discovers, online at once unless told (then "unknown" until it reports)."""
        device = self.fake.discover(source_id, data, orders, **fields)
        if online:
            self.engine.devices.update_status(FAKE_ID, source_id, "online")
        return device

    def equipment(self, name: str, equipment_type: str, devices: Iterable[Any] = (), data: dict[str, Any] | None = None,
                  orders: dict[str, Any] | None = None, zone_id: str | None = None) -> str:  # fmt: skip
        """An equipment's id: every datum and order of ``devices`` bound by key, and single ones bound by
        alias (``data={"state": datum}``, ``orders={"low": order}``); in ``zone_id`` or the house's zone."""
        manager = self.engine.equipments
        equipment_id = manager.create(name, equipment_type, zone_id or self.zone_id, device_ids=[d.id for d in devices])["id"]
        for alias, datum in (data or {}).items():
            manager.add_data_binding(equipment_id, datum.id, alias)
        for alias, order in (orders or {}).items():
            manager.add_order_binding(equipment_id, order.id, alias)
        return equipment_id

    def equipment_json(self, equipment_id: str) -> dict[str, Any]:
        manager = self.engine.equipments
        return manager.to_json(manager.require(equipment_id))

    # Equipments named after their one device, which is discovered with status "unknown"; in
    # ``zone_id`` or the house's zone.
    def light(self, name: str = "lamp", zone_id: str | None = None, *, kind: str = "light_dimmable") -> str:
        data, orders = light_specs()
        return self.equipment(name, kind, [self.device(name, data, orders, online=False)], zone_id=zone_id)

    def relay(self, name: str, zone_id: str | None = None, *, kind: str = "switch") -> str:
        device = self.device(name, [DataSpec("state", "enum", "generic", enum_values=["ON", "OFF"])], [relay_order("state")], online=False)
        return self.equipment(name, kind, [device], zone_id=zone_id)

    def motion_sensor(self, name: str = "pir", zone_id: str | None = None) -> str:
        device = self.device(name, [DataSpec("occupancy", "boolean", "motion"), DataSpec("illuminance", "number", "luminosity", "lx")], online=False)
        return self.equipment(name, "sensor", [device], zone_id=zone_id)

    def button(self, name: str = "button", zone_id: str | None = None) -> str:
        action = DataSpec("action", "enum", "action", enum_values=["single", "double", "hold"])
        return self.equipment(name, "button", [self.device(name, [action, DataSpec("battery", "number", "battery")], online=False)], zone_id=zone_id)

    def contact(self, name: str = "door", zone_id: str | None = None) -> str:
        return self.equipment(name, "sensor", [self.device(name, [DataSpec("contact", "boolean", "contact_door")], online=False)], zone_id=zone_id)

    def thermostat(self, name: str = "trv", zone_id: str | None = None) -> str:
        device = self.device(
            name,
            [DataSpec("local_temperature", "number", "temperature", "°C"), DataSpec("occupied_heating_setpoint", "number", "setpoint", "°C")],
            [OrderSpec("occupied_heating_setpoint", "number", "set_setpoint", min=5, max=30, unit="°C")],
            online=False,
        )
        return self.equipment(name, "thermostat", [device], zone_id=zone_id)

    def mode(self, name: str) -> str:
        return self.engine.modes.create(name)["id"]

    # ---- what happens ------------------------------------------------------------------------------
    def report(self, source_id: str, **payload: Any) -> None:
        """One device message, handled by the workers, then (on a ManualClock) a turn of the loop:
        what is due "now" runs, as it would live."""
        self.fake.report(source_id, payload)
        if self.clock is not None:
            self.clock.advance(0)

    def motion(self, on: bool, source: str = "pir", **extra: Any) -> None:
        self.report(source, occupancy=on, **extra)

    def press(self, source: str = "button", action: Any = "single") -> None:
        self.report(source, action=action)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def advance_to(self, moment: str | int | datetime) -> None:
        """Move the ManualClock to wall time in its zone (``"2026-06-15 09:00"``) or to epoch ms."""
        self.clock.set(local_ms(moment, self.clock.tz))

    # ---- what happened -----------------------------------------------------------------------------
    def sent(self, key: str | None = None) -> list[tuple[str, str, Any]]:
        """The orders the fake received since this engine was built (``(source id, key, value)``)."""
        return [s for s in self.fake.sent if key is None or s[1] == key]

    def events(self, event_type: str) -> list[dict[str, Any]]:
        return self.recorder.of(event_type)

    def clear(self) -> None:
        self.fake.sent.clear()
        self.recorder.clear()

    # ---- recipes -----------------------------------------------------------------------------------
    def recipe(self, recipe_id: str, **params: Any) -> str:
        """A new instance of ``recipe_id``: its id."""
        return self.recipes.create(recipe_id, params)["id"]

    def recipe_state(self, instance_id: str) -> dict[str, Any]:
        return self.recipes.get_instance(instance_id)["state"]

    def recipe_log(self, instance_id: str) -> list[str]:
        return [e["message"] for e in self.recipes.log_entries(instance_id, 1000)]

    # ---- the HTTP API, in process ------------------------------------------------------------------
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

        if self._app is None or self._app[0] is not self.engine:
            self._app = (self.engine, build_app(self.engine))  # once per engine: routes are built at start
        chunks = self._app[1](environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        return answer["status"], answer["headers"], content

    def token(self) -> str:
        """An administrator's access token (the first run's set-up, done once)."""
        if self._token is None:
            self._token = self.engine.auth.setup("admin", PASSWORD, "Admin", None)["accessToken"]
        return self._token
