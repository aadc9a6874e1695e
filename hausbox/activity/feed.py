"""The activity feed: a short history of what happened, built from bus events.

Each item is ``{id, timestamp, category, zoneId, message: {template, params}, source?}``. The
template is a stable key (``order.executed``, ``motion.detected`` ...) that the UI translates with
the params; ``source`` (who caused it) is on order items only. Zone-less items (modes, sunlight,
alarms) have ``zoneId`` null and show in every zone's feed.

Items live in memory (newest last) and are written to the database in small batches a moment after
they happen (by the activity worker, never on the message path), and on stop. Items are recorded
inline as events come, because motion items compare with the zone's live state at that moment. The feed keeps 7 days and at most 2000 items: older or extra items are
pruned as new ones come in, and never returned.

Motion is recorded per zone, from the zone's own motion sensors (not its sub-zones): one item when
the first sensor of a zone sees motion, one when the last one clears. Aggregated zone motion would
repeat the same event for every ancestor zone.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import deque
from typing import Any, Callable

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, Timer
from hausbox.core.workers import Worker
from hausbox.equipments.manager import EquipmentManager
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.activity")

CATEGORIES = ("order", "motion", "recipe", "mode", "sunlight", "alarm")
SOURCE_KINDS = frozenset({"recipe", "mode", "manual", "button", "external"})
RETENTION_MS = 7 * 24 * 3600 * 1000
MAX_ITEMS = 2000
FLUSH_DELAY_S = 2.0
DEFAULT_LIMIT, MAX_LIMIT = 100, 200


def _active(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.upper() == "ON")


class ActivityFeed:
    def __init__(
        self,
        db: orm.Database,
        bus: EventBus,
        worker: Worker,
        clock: Clock,
        zones: ZoneTree,
        equipments: EquipmentManager,
        sunlight: Callable[[], dict[str, Any]] = lambda: {},
    ):
        self._db = db
        self._bus = bus
        self._worker = worker
        self._clock = clock
        self._zones = zones
        self._equipments = equipments
        self._sunlight = sunlight
        # What the recipe service knows of an instance: {"recipeName": ..., "zoneId": ...} (any may be missing).
        self.recipe_info: Callable[[str], dict[str, Any]] = lambda _instance_id: {}
        self._items: deque[dict[str, Any]] = deque()
        self._pending: list[dict[str, Any]] = []
        self._flush_timer: Timer | None = None
        self._stopped = False
        self._motion: dict[str, bool] = {}
        self._daylight: bool | None = None
        self._load()
        for zone in zones.all():
            self._motion[zone.id] = self._zone_motion(zone.id)

        bus.on("equipment.order.executed", lambda e: self._on_order(e, failed=False))
        bus.on("equipment.order.failed", lambda e: self._on_order(e, failed=True))
        bus.on("equipment.data.changed", self._on_equipment_data)
        bus.on("equipment.created", lambda e: self._resync_motion(e["equipment"].get("zoneId")))
        bus.on("equipment.updated", lambda e: self._resync_motion(e["equipment"].get("zoneId"), e.get("previousZoneId")))
        bus.on("equipment.removed", lambda e: self._resync_motion(e.get("zoneId")))
        bus.on("zone.removed", lambda e: self._motion.pop(e["zoneId"], None))
        for name in ("recipe.instance.started", "recipe.instance.stopped", "recipe.instance.error"):
            bus.on(name, self._on_recipe)
        bus.on("mode.activated", lambda e: self._on_mode(e, "mode.activated"))
        bus.on("mode.deactivated", lambda e: self._on_mode(e, "mode.deactivated"))
        bus.on("system.started", lambda _e: self._seed_daylight())
        bus.on("sunlight.changed", self._on_sunlight)
        bus.on("system.alarm.raised", lambda e: self._on_alarm(e, "alarm.raised"))
        bus.on("system.alarm.resolved", lambda e: self._on_alarm(e, "alarm.resolved"))

    # ---- storage -----------------------------------------------------------------------------
    def _load(self) -> None:
        cutoff = self._clock.now_ms() - RETENTION_MS
        with orm.db_session:
            rows = self._db.select(
                "SELECT id, timestamp, category, zone_id, template, params, source FROM activity_items"
                " WHERE timestamp >= $cutoff ORDER BY seq DESC LIMIT $limit",
                {"cutoff": cutoff, "limit": MAX_ITEMS},
            )
        for item_id, timestamp, category, zone_id, template, params, source in reversed(rows):
            try:
                self._items.append(_item(item_id, timestamp, category, zone_id, template, json.loads(params), json.loads(source) if source else None))
            except ValueError:
                log.warning("skipping unreadable activity item %s", item_id)

    def flush(self) -> None:
        """Write the items not yet stored, and prune the table to 7 days and 2000 rows."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        pending, self._pending = self._pending, []
        cutoff = self._clock.now_ms() - RETENTION_MS
        pending = [item for item in pending[-MAX_ITEMS:] if item["timestamp"] >= cutoff]  # the rest is pruned anyway
        if not pending:
            return
        try:
            with orm.db_session:
                for item in pending:
                    message = item["message"]
                    self._db.ActivityItem(
                        id=item["id"], timestamp=item["timestamp"], category=item["category"], zone_id=item["zoneId"],
                        template=message["template"], params=message["params"], source=item.get("source"),
                    )  # fmt: skip
                orm.flush()
                self._db.execute("DELETE FROM activity_items WHERE timestamp < $cutoff", {"cutoff": cutoff})
                self._db.execute(
                    "DELETE FROM activity_items WHERE seq <= "
                    "(SELECT seq FROM activity_items ORDER BY seq DESC LIMIT 1 OFFSET $keep)",
                    {"keep": MAX_ITEMS},
                )
        except Exception:
            log.exception("could not store %d activity items", len(pending))

    def stop(self) -> None:
        self._stopped = True
        self.flush()

    # ---- recording ---------------------------------------------------------------------------
    def record(self, category: str, zone_id: str | None, template: str, params: dict[str, Any], source: dict[str, Any] | None = None) -> dict[str, Any]:
        """Add an item, prune the feed, announce ``activity.added {item}``; returns the item."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown activity category: {category}")
        now = self._clock.now_ms()
        item = _item(str(uuid.uuid4()), now, category, zone_id, template, params, source if category == "order" else None)
        items = self._items
        items.append(item)
        self._prune(now)
        self._pending.append(item)
        if self._stopped:
            self.flush()  # late news while the engine stops: no timer left to write it
        elif self._flush_timer is None:
            self._flush_timer = self._clock.call_later(FLUSH_DELAY_S, lambda: self._worker.submit(self.flush))
        self._bus.emit("activity.added", item=item)
        return item

    def _prune(self, now: int) -> None:
        items, cutoff = self._items, now - RETENTION_MS
        while items and (len(items) > MAX_ITEMS or items[0]["timestamp"] < cutoff):
            items.popleft()

    # ---- reading -----------------------------------------------------------------------------
    def query(self, zone_id: str | None = None, include_descendants: bool = True, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
        """Newest first; with a zone: its items (and its sub-zones' ones) plus the zone-less ones."""
        now = self._clock.now_ms()
        self._prune(now)
        cutoff = now - RETENTION_MS
        zone_ids: set[str] | None = None
        if zone_id is not None:
            zone_ids = {zone_id}
            if include_descendants and self._zones.exists(zone_id):
                zone_ids.update(zone.id for zone in self._zones.descendants(zone_id))
        found: list[dict[str, Any]] = []
        for item in reversed(self._items):
            if len(found) >= limit:
                break
            if item["timestamp"] < cutoff:
                continue
            if zone_ids is None or item["zoneId"] is None or item["zoneId"] in zone_ids:
                found.append(item)
        return found

    def __len__(self) -> int:
        return len(self._items)

    # ---- sources -----------------------------------------------------------------------------
    def _zone_name(self, zone_id: str | None) -> str | None:
        if zone_id is None or not self._zones.exists(zone_id):
            return None
        return self._zones.get(zone_id).name

    def _on_order(self, event: Event, failed: bool) -> None:
        equipment = self._equipments.get(event["equipmentId"])
        zone_id = equipment.zone_id if equipment is not None else None
        params: dict[str, Any] = {
            "equipmentId": event["equipmentId"],
            "equipmentName": equipment.name if equipment is not None else None,
            "alias": event.get("orderAlias"),
            "value": event.get("value"),
            "zoneName": self._zone_name(zone_id),
        }
        if failed:
            params["error"] = event.get("error")
        self.record("order", zone_id, "order.failed" if failed else "order.executed", params, self._source(event.get("source")))

    def _source(self, given: Any) -> dict[str, Any]:
        source = dict(given) if isinstance(given, dict) else {}
        if source.get("kind") not in SOURCE_KINDS:
            source["kind"] = "manual" if not source.get("kind") else "external"
        if source["kind"] == "recipe" and source.get("instanceId") and not source.get("recipeName"):
            source["recipeName"] = self._recipe_info(source["instanceId"]).get("recipeName")
        return source

    def _recipe_info(self, instance_id: str) -> dict[str, Any]:
        try:
            return self.recipe_info(instance_id) or {}
        except Exception:
            log.exception("recipe lookup failed for %s", instance_id)
            return {}

    def _zone_motion(self, zone_id: str) -> bool:
        """Whether a motion sensor placed directly in the zone sees motion."""
        equipments = self._equipments
        for equipment in equipments.in_zone(zone_id):
            for alias in equipment.data_bindings:
                datum = equipments.datum_of(equipment, alias)
                if datum is not None and datum.category == "motion" and _active(equipment.data.get(alias)):
                    return True
        return False

    def _resync_motion(self, *zone_ids: str | None) -> None:
        for zone_id in zone_ids:
            if zone_id and self._zones.exists(zone_id):
                self._motion[zone_id] = self._zone_motion(zone_id)

    def _on_equipment_data(self, event: Event) -> None:
        equipment = self._equipments.get(event["equipmentId"])
        if equipment is None:
            return
        datum = self._equipments.datum_of(equipment, event["alias"])
        if datum is None or datum.category != "motion":
            return
        zone_id = equipment.zone_id
        now_active = self._zone_motion(zone_id)
        if now_active == self._motion.get(zone_id, False):
            return
        self._motion[zone_id] = now_active
        params = {"zoneId": zone_id, "zoneName": self._zone_name(zone_id), "equipmentId": equipment.id, "equipmentName": equipment.name}
        self.record("motion", zone_id, "motion.detected" if now_active else "motion.cleared", params)

    def _on_recipe(self, event: Event) -> None:
        instance_id = event.get("instanceId")
        info = self._recipe_info(instance_id) if instance_id else {}
        params: dict[str, Any] = {"instanceId": instance_id, "recipeId": event.get("recipeId")}
        name = event.get("recipeName") or info.get("recipeName")
        if name is not None:
            params["recipeName"] = name
        if event["type"] == "recipe.instance.error":
            params["error"] = event.get("error")
        zone_id = event.get("zoneId") or info.get("zoneId")
        template = "recipe." + event["type"].rsplit(".", 1)[1]  # recipe.started / .stopped / .error
        self.record("recipe", zone_id if zone_id and self._zones.exists(zone_id) else None, template, params)

    def _on_mode(self, event: Event, template: str) -> None:
        self.record("mode", None, template, {"modeId": event.get("modeId"), "modeName": event.get("modeName")})

    def _sun_state(self, event: Event | None = None) -> dict[str, Any]:
        if event is not None and "isDaylight" in event:
            state = event
        else:
            try:
                state = self._sunlight() or {}
            except Exception:
                log.exception("sunlight state unavailable")
                state = {}
        return {key: state.get(key) for key in ("isDaylight", "sunrise", "sunset")}

    def _seed_daylight(self) -> None:
        if self._daylight is None:
            self._daylight = self._sun_state()["isDaylight"]

    def _on_sunlight(self, event: Event) -> None:
        """Sunrise and sunset: only a change of daylight is news (new times at midnight are not)."""
        state = self._sun_state(event)
        daylight = state["isDaylight"]
        previous = self._daylight
        if daylight is None:
            return
        self._daylight = daylight
        if previous is None or previous == daylight:
            return
        self.record("sunlight", None, "sunlight.sunrise" if daylight else "sunlight.sunset", state)

    def _on_alarm(self, event: Event, template: str) -> None:
        params = {key: event.get(key) for key in ("alarmId", "level", "source", "message") if key in event}
        self.record("alarm", None, template, params)


def _item(item_id: str, timestamp: int, category: str, zone_id: str | None, template: str, params: dict[str, Any], source: dict[str, Any] | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": item_id,
        "timestamp": timestamp,
        "category": category,
        "zoneId": zone_id,
        "message": {"template": template, "params": params},
    }
    if category == "order":
        item["source"] = source or {"kind": "manual"}
    return item
