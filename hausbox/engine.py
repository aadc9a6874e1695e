"""The Engine builds every service in dependency order, starts them, and stops them.

Services get what they need in their constructor; nothing reaches for globals. Routes reach the
services through ``call.engine``.
"""

from __future__ import annotations

import logging

from hausbox import __version__
from hausbox.auth import models as auth_models
from hausbox.auth.service import AuthService
from hausbox.config import Config
from hausbox.core import database, secrets
from hausbox.core import settings as settings_module
from hausbox.core.bus import EventBus
from hausbox.core.logs import setup_logging
from hausbox.core.settings import SettingsStore
from hausbox.realtime.hub import WebSocketHub
from hausbox.system.health import Health

log = logging.getLogger("hausbox.engine")

DATABASE_FILE = "hausbox.db"
ENTITY_DEFINERS = (settings_module.define_entities, auth_models.define_entities)


class Engine:
    def __init__(self, config: Config, ws_backlog_bytes: int = 2 << 20):
        self.config = config
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_ring, self.redactor = setup_logging(config.data_dir / "logs", config.log_level)
        self.bus = EventBus()
        self.log_ring.add_listener(lambda entry: self.bus.emit("log.entry", **entry))
        self.secrets = secrets.load_or_create(config.data_dir)
        self.redactor.add_secret(self.secrets.jwt_signing_key)
        self.redactor.add_secret(self.secrets.history_token)
        self.db = database.open_database(config.data_dir / DATABASE_FILE, ENTITY_DEFINERS)
        self.settings = SettingsStore(self.db, self.bus, on_secret=self.redactor.add_secret)
        self.auth = AuthService(self.db, self.bus, self.settings, self.secrets.jwt_signing_key, config)
        self.hub = WebSocketHub(self.bus, self.auth, max_backlog_bytes=ws_backlog_bytes)
        self.health = Health()

    def start(self) -> None:
        self.hub.start()
        self.bus.emit("system.started")
        log.info("hausbox %s started (data in %s)", __version__, self.config.data_dir)

    def stop(self) -> None:
        log.info("stopping")
        self.hub.stop()
        self.db.disconnect()
