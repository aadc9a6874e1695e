"""The simulator integration: runs a :class:`VirtualHome` through the plugin API.

Three kinds of greenlets, all in one group that ``stop`` kills:

- the runner: discovery (upsert every device, drop the ones a smaller home no longer has, mark
  them online, publish their first values), then the paced rotation of sensor and meter messages
  at ``message_rate`` per second, sent in small batches between ``gevent.sleep`` calls;
- the animator: every half second, the reports of shutters and gates on their way;
- one short-lived greenlet per order, answering 50 to 300 ms after it, like a radio would.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import gevent
from gevent.pool import Group

from hausbox.integrations.builtin.simulator.home import VirtualHome
from hausbox.sdk import IntegrationContext, SettingDef

SOURCE = "simulator"
DEFAULT_ROOMS = 4
MAX_ROOMS = 500
DEFAULT_RATE = 2.0
MAX_RATE = 100_000.0
DEFAULT_SEED = 1
ANIMATION_TICK_S = 0.5
ANSWER_DELAY_S = (0.05, 0.3)
YIELD_EVERY = 200  # messages sent in a row before letting other greenlets run
MAX_BACKLOG_S = 0.5  # behind by more than this: skip messages rather than burst
ERROR_LOG_EVERY_S = 60.0


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return value is True or (isinstance(value, (int, float)) and value == 1)


def _number(settings: Any, key: str, default: float, low: float, high: float) -> float:
    value = settings.get(key)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"setting {key} must be a number (got {value!r})") from None
    if isinstance(value, bool) or not low <= number <= high:
        raise ValueError(f"setting {key} must be between {low:g} and {high:g} (got {value!r})")
    return number


class SimulatorIntegration:
    id = "simulator"
    name = "Simulator"
    description = "A virtual home (lights, shutters, sensors, meters) whose devices answer orders; for demos and benchmarks"
    icon = "flask-conical"
    api_version = 2

    def __init__(self, context: IntegrationContext, manifest: dict[str, Any] | None = None):
        self._context = context
        self._log: logging.Logger = context.logger
        if manifest:
            self.name = manifest.get("name", self.name)
            self.description = manifest.get("description", self.description)
            self.icon = manifest.get("icon", self.icon)
        self._group = Group()
        self._home: VirtualHome | None = None
        self._status = "disconnected"
        self._detail: str | None = None
        self.rate = DEFAULT_RATE
        self.sent = 0  # periodic messages sent since the last start

    # ---- the plugin API ----------------------------------------------------------------------
    def settings_schema(self) -> list[SettingDef]:
        return [
            SettingDef("enabled", "Enabled", "boolean", default=False),
            SettingDef("rooms", "Number of rooms", "number", default=DEFAULT_ROOMS),
            SettingDef("message_rate", "Sensor and meter messages per second (whole home)", "number", default=DEFAULT_RATE),
            SettingDef("seed", "Random seed (the same seed builds the same home)", "number", default=DEFAULT_SEED),
        ]

    def is_configured(self) -> bool:
        return _flag(self._context.settings.get("enabled"))

    def status(self) -> str:
        return self._status

    def status_detail(self) -> str | None:
        return self._detail

    def start(self) -> None:
        if self._home is not None:
            self.stop()
        settings = self._context.settings
        try:
            rooms = int(_number(settings, "rooms", DEFAULT_ROOMS, 1, MAX_ROOMS))
            self.rate = _number(settings, "message_rate", DEFAULT_RATE, 0, MAX_RATE)
        except ValueError as error:
            self._set_status("error", str(error))
            raise
        seed = settings.get("seed")
        seed = DEFAULT_SEED if seed is None or seed == "" else seed
        if isinstance(seed, float) and seed.is_integer():
            seed = int(seed)
        self._home = VirtualHome(rooms=rooms, seed=seed, now=time.time())
        self.sent = 0
        self._detail = None
        self._group.spawn(self._run, self._home)

    def stop(self) -> None:
        home, self._home = self._home, None
        self._group.kill(block=True, timeout=5)
        if home is not None:
            # The virtual home is gone: its devices are no longer there to answer.
            devices = self._context.devices
            for source_id in home.devices:
                devices.update_status(source_id, "offline")
        self._set_status("disconnected", None)

    def execute_order(self, device: Any, order_key: str, value: Any) -> None:
        home = self._home
        if home is None or self._status != "connected":
            raise RuntimeError("the simulator is not running")
        simulated = home.execute(device.source_device_id, order_key, value, time.time())  # ValueError: a failed order
        delay = home.rng.uniform(*ANSWER_DELAY_S)
        self._group.spawn(self._answer, home, simulated.source_id, delay)

    # ---- greenlets ---------------------------------------------------------------------------
    def _set_status(self, status: str, detail: str | None) -> None:
        self._status, self._detail = status, detail
        self._context.report_status(status, detail)

    def _publish(self, source_id: str, payload: dict[str, Any]) -> None:
        self._context.devices.update_data(source_id, payload)

    def _answer(self, home: VirtualHome, source_id: str, delay: float) -> None:
        gevent.sleep(delay)
        if home is self._home:
            self._publish(source_id, home.devices[source_id].state(time.time()))

    def _run(self, home: VirtualHome) -> None:
        try:
            self._discover(home)
        except Exception as error:  # (GreenletExit, from stop, is no Exception: it goes through)
            self._log.exception("could not set up the virtual home")
            self._set_status("error", f"could not set up the virtual home: {error}")
            return
        self._set_status("connected", None)
        self._log.info("virtual home running: %d rooms, %d devices, %g messages/s", len(home.rooms), len(home.devices), self.rate)
        self._group.spawn(self._animate, home)
        self._loop(home)

    def _discover(self, home: VirtualHome) -> None:
        devices = self._context.devices
        for n, found in enumerate(home.discovered(), 1):
            devices.upsert_from_discovery(SOURCE, found)
            if n % 20 == 0:
                gevent.sleep(0)  # a big home must not hold up the requests being served
        removed = devices.remove_stale(set(home.devices))
        if removed:
            self._log.info("removed %d simulated devices the home no longer has", removed)
        now = time.time()
        for source_id, device in home.devices.items():
            devices.update_status(source_id, "online")
            self._publish(source_id, device.state(now))

    def _animate(self, home: VirtualHome) -> None:
        while True:
            gevent.sleep(ANIMATION_TICK_S)
            try:
                for source_id, payload in home.animate(time.time()):
                    self._publish(source_id, payload)
            except Exception:
                self._log.exception("shutter or gate report failed")

    def _loop(self, home: VirtualHome) -> None:
        """``rate`` messages a second, paced against the monotonic clock, in small batches."""
        rate = self.rate
        if rate <= 0:
            return  # no spontaneous messages: devices still answer orders
        tick = min(0.1, max(0.01, 1.0 / rate))
        max_batch = max(1, int(rate * MAX_BACKLOG_S))
        update = self._context.devices.update_data
        started, due_total, last_error = time.monotonic(), 0, -ERROR_LOG_EVERY_S
        while True:
            due = int((time.monotonic() - started) * rate) - due_total
            if due > max_batch:  # the box cannot keep up: drop the backlog, do not burst
                due_total += due - max_batch
                due = max_batch
            if due > 0:
                due_total += due
                now = time.time()
                try:
                    for n in range(due):
                        report = home.next_report(now)
                        if report is not None:
                            update(report[0], report[1])
                            self.sent += 1
                        if n % YIELD_EVERY == YIELD_EVERY - 1:
                            gevent.sleep(0)
                except Exception:
                    if time.monotonic() - last_error >= ERROR_LOG_EVERY_S:  # a fault repeats at every tick
                        last_error = time.monotonic()
                        self._log.exception("simulated message failed")
            gevent.sleep(tick)
