"""The Engine: the core every domain shares, then the components, started and stopped in stages.

A reader starts here, then opens a domain's ``component.py`` (see ``core/components.py`` for the
contract): every package of ``hausbox/`` with one is loaded, in the order of what each requires.
The core built here is what every component may use: configuration, logs, the bus and its
workers, secrets, the database, settings, the home's clock, alarms and health. Routes reach the
services through ``call.engine``.
"""

from __future__ import annotations

import logging
from typing import Any

from hausbox import __version__
from hausbox.config import Config
from hausbox.backup.apply import apply_staged as apply_staged_restore
from hausbox.core import database, secrets
from hausbox.core import settings as settings_module
from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.components import Component, discover
from hausbox.core.event_payloads import CORE_EVENTS
from hausbox.core.logs import setup_logging
from hausbox.core.settings import SettingsStore
from hausbox.core.storage import secure_data_dir
from hausbox.core.workers import Worker, Workers
from hausbox.system import identity
from hausbox.system.alarms import Alarms
from hausbox.system.health import Health
from hausbox.system.timezone import LocationWatch, resolve_zone

log = logging.getLogger("hausbox.engine")

DATABASE_FILE = "hausbox.db"
STATES = ("built", "starting", "running", "stopping", "final write", "closed")


class Engine:
    # what the components build (see their component.py); declared so that readers find them
    action_refs: Any
    activity: Any
    aggregator: Any
    audit: Any
    auth: Any
    backups: Any
    battery: Any
    button_actions: Any
    calendar: Any
    camera: Any
    charts: Any
    confirmation: Any
    dashboard: Any
    devices: Any
    equipments: Any
    equipments_view: Any
    freshness: Any
    history: Any
    history_jobs: Any
    hub: Any
    integrations: Any
    modes: Any
    notifications: Any
    orders: Any
    plugins: Any
    publishers: Any
    recipes: Any
    self_update: Any
    storage: Any
    sunlight: Any
    tariff: Any
    timed_actions: Any
    versions: Any
    vmc: Any
    zone_orders: Any
    zones: Any

    def __init__(self, config: Config, clock: Clock | None = None, components: list[Component] | None = None):
        self.config = config
        self.state = "built"
        self.components = components if components is not None else discover()
        secure_data_dir(config.data_dir)
        apply_staged_restore(config.data_dir, self.components)  # before anything opens the data (backup/apply.py)
        self.log_ring, self.redactor = setup_logging(config.data_dir / "logs", config.log_level)
        self.bus = EventBus(strict=config.strict_events)
        self.bus.declare(CORE_EVENTS)
        for component in self.components:
            self.bus.declare(component.events)
        self.log_ring.add_listener(lambda entry: self.bus.emit("log.entry", **entry))
        # Workers: the subscribers that may wait (orders, database, HTTP), each on its own queue.
        self.workers = Workers(self.bus)
        if config.shadow_mode:
            self.workers.gate.close(identity.SHADOW)
        self.secrets = secrets.load_or_create(config.data_dir)
        self.redactor.add_secret(self.secrets.jwt_signing_key)
        self.redactor.add_secret(self.secrets.history_token)
        definers = [settings_module.define_entities] + [c.entities for c in self.components if c.entities is not None]
        self.db = database.open_database(config.data_dir / DATABASE_FILE, definers)
        self.settings = SettingsStore(self.db, self.bus, on_secret=self.redactor.add_secret)
        self.zone_choice = resolve_zone(self.settings)
        self.location = LocationWatch(self.bus, self.settings)
        self.clock = clock or Clock(self.zone_choice.tz, config.clock_skew_ms)
        # A database restored from another box leaves this one inert until the takeover (system/identity.py).
        self.identity = identity.resolve(config.data_dir, self.db, self.clock.now_ms(), config.shadow_mode, config.takeover)
        if self.identity.inert and not config.shadow_mode:
            self.workers.gate.close(identity.INERT)
        self.alarms = Alarms(self.bus)
        self.workers.overflow_listeners.append(self._worker_overflow)
        self.health = Health()
        for component in self.components:
            if component.setup is not None:
                component.setup(self)

    def _worker_overflow(self, worker: Worker, overflowing: bool) -> None:
        alarm_id = f"worker-overflow:{worker.name}"
        if overflowing:
            self.alarms.raise_alarm(alarm_id, "error", "engine", f"The {worker.name} worker fell behind: {worker.dropped} job(s) dropped so far")
        else:
            self.alarms.resolve(alarm_id, f"The {worker.name} worker caught up ({worker.dropped} job(s) dropped in all)")

    def _stage(self, hook: str, reverse: bool = False) -> None:
        """Run one stage's hook of every component; one that raises is logged, the others still run."""
        for component in reversed(self.components) if reverse else self.components:
            fn = getattr(component, hook)
            if fn is None:
                continue
            try:
                fn(self)
            except Exception:
                log.exception("component %s: %s failed", component.name, hook)

    def start(self) -> None:
        self.state = "starting"
        self.workers.start()
        self._stage("start")
        self.bus.emit("system.started")
        self.state = "running"
        log.info("hausbox %s started (data in %s)", __version__, self.config.data_dir)

    def checkpoint(self) -> None:
        """Every component writes what it keeps in memory (see core/components.py); the first that
        cannot raises, and the caller (a backup) must not read a data directory missing it."""
        for component in self.components:
            if component.checkpoint is not None:
                component.checkpoint(self)

    def stop(self) -> None:
        """Stop in stages so that nothing queued is lost: what the workers hold runs before the
        integrations disconnect, what the last messages caused runs before the final write."""
        log.info("stopping")
        self.state = "stopping"
        self._stage("stop", reverse=True)  # automation and timers off: nothing new starts
        self.workers.drain()  # queued orders still reach connected integrations
        self._stage("disconnect", reverse=True)
        self.workers.stop()
        self.state = "final write"
        self._stage("final_write", reverse=True)
        self.db.disconnect()
        self.state = "closed"
