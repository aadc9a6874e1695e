"""The Engine builds every service in dependency order, starts them, and stops them.

Services get what they need in their constructor; nothing reaches for globals. Routes reach the
services through ``call.engine``.
"""

from __future__ import annotations

import logging

from hausbox import __version__
from hausbox.activity import models as activity_models
from hausbox.activity.feed import ActivityFeed
from hausbox.auth import models as auth_models
from hausbox.auth.service import AuthService
from hausbox.buttons import models as button_models
from hausbox.buttons.service import ButtonActions
from hausbox.calendar import models as calendar_models
from hausbox.calendar.service import CalendarService
from hausbox.charts import models as chart_models
from hausbox.charts.service import Charts
from hausbox.config import Config
from hausbox.core import database, secrets
from hausbox.core import settings as settings_module
from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock
from hausbox.core.logs import setup_logging
from hausbox.core.settings import SettingsStore
from hausbox.core.workers import Worker, Workers
from hausbox.dashboard import models as dashboard_models
from hausbox.dashboard.widgets import DashboardWidgets
from hausbox.devices import models as device_models
from hausbox.devices import snapshot as device_snapshot
from hausbox.devices.battery import BatteryMonitor
from hausbox.devices.manager import DeviceManager
from hausbox.equipments import models as equipment_models
from hausbox.equipments import timed_command
from hausbox.equipments.camera import CameraProxy
from hausbox.equipments.confirmation import DeliveryConfirmation
from hausbox.equipments.freshness import FreshnessBudget
from hausbox.equipments.listing import EquipmentListing
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.equipments.timed_actions import TimedActions
from hausbox.equipments.vmc import VmcSpeed
from hausbox.integrations.registry import IntegrationRegistry
from hausbox.modes import models as mode_models
from hausbox.modes.references import References
from hausbox.modes.service import ModeService
from hausbox.realtime.hub import WebSocketHub
from hausbox.recipes import models as recipe_models
from hausbox.recipes.manager import RecipeManager
from hausbox.system.alarms import Alarms
from hausbox.system.health import Health
from hausbox.system.sunlight import Sunlight
from hausbox.system.timezone import LocationWatch, resolve_zone
from hausbox.zones import models as zone_models
from hausbox.zonecontrol.aggregation import ZoneAggregator
from hausbox.zonecontrol.orders import ZoneOrders
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.engine")

DATABASE_FILE = "hausbox.db"
ENTITY_DEFINERS = (
    settings_module.define_entities,
    auth_models.define_entities,
    zone_models.define_entities,
    device_models.define_entities,
    equipment_models.define_entities,
    recipe_models.define_entities,
    mode_models.define_entities,
    calendar_models.define_entities,
    button_models.define_entities,
    activity_models.define_entities,
    dashboard_models.define_entities,
    chart_models.define_entities,
)


class Engine:
    def __init__(self, config: Config, clock: Clock | None = None):
        self.config = config
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_ring, self.redactor = setup_logging(config.data_dir / "logs", config.log_level)
        self.bus = EventBus()
        # Workers: the subscribers that may wait (orders, database, HTTP), each on its own queue.
        self.workers = Workers(self.bus)
        if config.shadow_mode:
            self.workers.gate.close("shadow mode")
        self.log_ring.add_listener(lambda entry: self.bus.emit("log.entry", **entry))
        self.secrets = secrets.load_or_create(config.data_dir)
        self.redactor.add_secret(self.secrets.jwt_signing_key)
        self.redactor.add_secret(self.secrets.history_token)
        self.db = database.open_database(config.data_dir / DATABASE_FILE, ENTITY_DEFINERS)
        self.settings = SettingsStore(self.db, self.bus, on_secret=self.redactor.add_secret)
        self.zone_choice = resolve_zone(self.settings)
        self.location = LocationWatch(self.bus, self.settings)
        self.clock = clock or Clock(self.zone_choice.tz, config.clock_skew_ms)
        self.auth = AuthService(self.db, self.bus, self.settings, self.secrets.jwt_signing_key, config)
        # The hub subscribes first, so it observes every event of the pipeline in emission order.
        self.hub = WebSocketHub(self.bus, self.auth, max_backlog_bytes=config.ws_backlog_bytes)
        self.alarms = Alarms(self.bus)
        self.workers.overflow_listeners.append(self._worker_overflow)
        self.health = Health()

        # topology and the reactive pipeline: integration -> devices -> equipments -> zones
        self.zones = ZoneTree(self.db, self.bus)
        self.devices = DeviceManager(self.db, self.bus, zone_exists=self.zones.exists, state_path=config.data_dir / device_snapshot.FILE_NAME)
        self.battery = BatteryMonitor(self.db, self.workers.create("battery"), self.devices, self.alarms)
        self.integrations = IntegrationRegistry(self.bus, self.settings, self.devices, config.data_dir)
        self.integrations.load_builtins()
        self.health.add_contributor(self.integrations.health)
        self.equipments = EquipmentManager(self.db, self.bus, self.devices, self.zones)
        self.orders = OrderService(self.bus, self.equipments, self.integrations, self.alarms)
        self.freshness = FreshnessBudget(self.bus, self.devices, self.integrations.get)
        self.equipments.binding_decorators.append(self.freshness.decorate_binding)
        self.equipments.update_validators.append(timed_command.validate_update)
        self.confirmation = DeliveryConfirmation(self.bus, self.workers.create("confirmation"), self.equipments, self.devices, self.orders, self.alarms, wait_s=config.order_confirm_s)
        self.timed_actions = TimedActions(self.db, self.bus, self.workers.create("timed-actions"), self.clock, self.equipments, self.orders, self.integrations, self.alarms)
        self.vmc = VmcSpeed(self.equipments, self.orders)
        self.camera = CameraProxy(self.equipments)
        self.equipments_view = EquipmentListing(self.equipments, self.equipments.is_online, budget_ms=self.freshness.budget_ms)
        self.sunlight = Sunlight(self.bus, self.settings, self.clock)
        self.aggregator = ZoneAggregator(self.bus, self.zones, self.equipments, self.equipments.is_online, root_extras=self.sunlight.snapshot)
        self.zone_orders = ZoneOrders(self.zones, self.equipments, self.orders)
        # orchestration: modes (per-zone impacts), the calendar that switches them, button actions;
        # the recipe service is looked up when needed (recipe actions name its instances)
        self.action_refs = References(self.equipments, self.zones, recipes=lambda: getattr(self, "recipes", None))
        self.modes = ModeService(self.db, self.bus, self.clock, self.zones, self.orders, self.action_refs)
        self.calendar = CalendarService(self.db, self.bus, self.workers.create("calendar"), self.clock, self.settings, self.modes)
        self.button_actions = ButtonActions(self.db, self.bus, self.workers.create("buttons"), self.clock, self.equipments, self.modes, self.orders, self.zone_orders, self.action_refs)
        # side features: the activity feed (a bus subscriber), dashboard widgets, saved charts
        self.activity = ActivityFeed(self.db, self.bus, self.workers.create("activity"), self.clock, self.zones, self.equipments, sunlight=lambda: self.aggregator.root_extras())
        self.dashboard = DashboardWidgets(self.db, self.bus, self.clock, self.zones, self.equipments)
        self.charts = Charts(self.db, self.clock)
        # recipes: automation instances driven by the pipeline's events (started on system.started)
        self.recipes = RecipeManager(self.db, self.bus, self.workers.create("recipes"), self.clock, self.equipments, self.zones, self.aggregator, self.orders)
        self.activity.recipe_info = self.recipes.info

    def _worker_overflow(self, worker: Worker, overflowing: bool) -> None:
        alarm_id = f"worker-overflow:{worker.name}"
        if overflowing:
            self.alarms.raise_alarm(alarm_id, "error", "engine", f"The {worker.name} worker fell behind: {worker.dropped} job(s) dropped so far")
        else:
            self.alarms.resolve(alarm_id, f"The {worker.name} worker caught up ({worker.dropped} job(s) dropped in all)")

    def start(self) -> None:
        self.workers.start()
        self.hub.start()
        self.devices.start()
        self.battery.start()
        self.sunlight.start()
        self.bus.emit("system.started")
        self.calendar.start()
        self.integrations.start_all()
        log.info("hausbox %s started (data in %s)", __version__, self.config.data_dir)

    def stop(self) -> None:
        log.info("stopping")
        self.workers.drain()  # what was queued before the stop still runs, orders included
        self.recipes.stop_all()  # before the integrations: a runner may still send from stop()
        self.calendar.stop()
        self.sunlight.stop()
        self.timed_actions.stop()  # first: a revert due while stopping is kept for the next start
        self.integrations.stop_all()
        self.confirmation.stop()
        self.battery.stop()
        self.workers.stop()
        self.devices.stop()  # writes the values not yet persisted
        self.activity.stop()  # writes the items not yet stored
        self.hub.stop()
        self.db.disconnect()
