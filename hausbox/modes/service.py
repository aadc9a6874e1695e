"""Modes: named home states with per-zone impacts, applied when a mode is activated.

- What a mode is (name, impacts) is configuration; whether it is active is runtime state, kept in
  the database so that it survives a restart (impacts are not re-applied at start-up).
- Several modes may be active at once. Activating an active mode, or deactivating an inactive one,
  changes nothing and emits nothing.
- Activation applies every zone's impact, action by action, in the order they were configured;
  a failing action is logged and skipped, never blocking the others. Deactivation reverts nothing.
- Impact actions: ``order`` {equipmentId, orderAlias, value}, ``recipe_toggle`` {instanceId,
  enabled}, ``recipe_params`` {instanceId, params}. They are checked when written.

Modes are few and read often (calendar, buttons, the UI): they live in memory, written through.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, NotFound
from hausbox.equipments.orders import OrderService
from hausbox.modes.references import References
from hausbox.modes.references import field as checked
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.modes")

NAME_MAX, DESCRIPTION_MAX = 100, 500
ACTION_TYPES = ("order", "recipe_toggle", "recipe_params")


@dataclass
class Impact:
    id: str
    mode_id: str
    zone_id: str
    actions: list[dict[str, Any]]
    created_at: int
    updated_at: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "modeId": self.mode_id, "zoneId": self.zone_id, "actions": [dict(a) for a in self.actions]}


@dataclass
class Mode:
    id: str
    name: str
    icon: str | None
    description: str | None
    active: bool
    created_at: int
    updated_at: int
    impacts: dict[str, Impact] = field(default_factory=dict)  # by zone id

    def ordered_impacts(self) -> list[Impact]:
        return sorted(self.impacts.values(), key=lambda i: (i.created_at, i.zone_id))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "icon": self.icon,
            "description": self.description,
            "active": self.active,
            "state": "active" if self.active else "inactive",
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
            "impacts": [impact.to_json() for impact in self.ordered_impacts()],
        }


class ModeService:
    def __init__(self, db: orm.Database, bus: EventBus, clock: Clock, zones: ZoneTree, orders: OrderService, references: References):
        self._db = db
        self._bus = bus
        self._clock = clock
        self._zones = zones
        self._orders = orders
        self._refs = references
        self._modes: dict[str, Mode] = {}
        self._last_created = 0  # impact creation stamps are strictly increasing: they order activation
        self._load()
        bus.on("zone.removed", self._on_zone_removed)  # a cascade of a user's deletion: before it is acknowledged

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.Mode.select():
                self._modes[row.id] = Mode(row.id, row.name, row.icon, row.description, row.active, row.created_at, row.updated_at)
            for row in self._db.ZoneModeImpact.select():
                mode = self._modes.get(row.mode_id)
                if mode is not None:
                    mode.impacts[row.zone_id] = Impact(row.id, row.mode_id, row.zone_id, list(row.actions or []), row.created_at, row.updated_at)
                self._last_created = max(self._last_created, row.created_at)

    # ---- reads -------------------------------------------------------------------------------
    def exists(self, mode_id: str) -> bool:
        return mode_id in self._modes

    def get(self, mode_id: str) -> Mode:
        mode = self._modes.get(mode_id)
        if mode is None:
            raise NotFound(f"Mode not found: {mode_id}")
        return mode

    def is_active(self, mode_id: str) -> bool:
        return self.get(mode_id).active

    def all(self) -> list[Mode]:
        return sorted(self._modes.values(), key=lambda m: (m.name.lower(), m.id))

    def all_json(self) -> list[dict[str, Any]]:
        return [mode.to_json() for mode in self.all()]

    def get_json(self, mode_id: str) -> dict[str, Any]:
        return self.get(mode_id).to_json()

    def zone_impacts_json(self, zone_id: str) -> list[dict[str, Any]]:
        """Every mode's impact on ``zone_id`` (with the mode's name and state), modes by name."""
        self._zones.get(zone_id)
        found = []
        for mode in self.all():
            impact = mode.impacts.get(zone_id)
            if impact is not None:
                found.append({**impact.to_json(), "modeName": mode.name, "modeActive": mode.active})
        return found

    # ---- configuration (admin) -----------------------------------------------------------------
    def create(self, name: str, icon: str | None = None, description: str | None = None) -> dict[str, Any]:
        stamp = self._clock.now_ms()
        mode = Mode(str(uuid.uuid4()), name.strip(), icon, description, False, stamp, stamp)
        with orm.db_session:
            self._db.Mode(id=mode.id, name=mode.name, icon=icon, description=description, active=False, created_at=stamp, updated_at=stamp)
        self._modes[mode.id] = mode
        body = mode.to_json()
        self._bus.emit("mode.created", mode=body)
        return body

    def update(self, mode_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        mode = self.get(mode_id)
        changes: dict[str, Any] = {}
        if "name" in fields:
            changes["name"] = fields["name"].strip()
        for name in ("icon", "description"):
            if name in fields:
                changes[name] = fields[name]
        changes["updated_at"] = self._clock.now_ms()
        with orm.db_session:
            self._db.Mode[mode_id].set(**changes)
        for name, value in changes.items():
            setattr(mode, name, value)
        body = mode.to_json()
        self._bus.emit("mode.updated", mode=body)
        return body

    def delete(self, mode_id: str) -> None:
        mode = self.get(mode_id)
        with orm.db_session:
            self._db.ZoneModeImpact.select(lambda i: i.mode_id == mode_id).delete(bulk=True)
            self._db.Mode[mode_id].delete()
        del self._modes[mode_id]
        self._bus.emit("mode.removed", modeId=mode_id, modeName=mode.name)

    def set_impact(self, mode_id: str, zone_id: str, actions: list[Any]) -> dict[str, Any]:
        """Create or replace the mode's impact on a zone (the impact keeps its id when replaced)."""
        mode = self.get(mode_id)
        self._zones.get(zone_id)
        checked_actions = self.check_actions(actions)
        stamp = self._clock.now_ms()
        impact = mode.impacts.get(zone_id)
        with orm.db_session:
            if impact is None:
                created = self._last_created = max(stamp, self._last_created + 1)
                impact = Impact(str(uuid.uuid4()), mode_id, zone_id, checked_actions, created, stamp)
                self._db.ZoneModeImpact(id=impact.id, mode_id=mode_id, zone_id=zone_id, actions=checked_actions, created_at=created, updated_at=stamp)
            else:
                self._db.ZoneModeImpact[impact.id].set(actions=checked_actions, updated_at=stamp)
                impact.actions, impact.updated_at = checked_actions, stamp
        mode.impacts[zone_id] = impact
        self._touch(mode)
        return impact.to_json()

    def delete_impact(self, mode_id: str, zone_id: str) -> None:
        mode = self.get(mode_id)
        impact = mode.impacts.get(zone_id)
        if impact is None:
            raise NotFound(f"Mode {mode.name} has no impact on zone {zone_id}")
        with orm.db_session:
            self._db.ZoneModeImpact[impact.id].delete()
        del mode.impacts[zone_id]
        self._touch(mode)

    def _touch(self, mode: Mode) -> None:
        mode.updated_at = self._clock.now_ms()
        with orm.db_session:
            self._db.Mode[mode.id].set(updated_at=mode.updated_at)
        self._bus.emit("mode.updated", mode=mode.to_json())

    def check_actions(self, actions: list[Any]) -> list[dict[str, Any]]:
        """The impact actions, normalised (unknown keys dropped); BadRequest naming the field."""
        if not isinstance(actions, list):
            raise BadRequest("actions must be an array")
        result = []
        for index, action in enumerate(actions):
            where = f"actions[{index}]"
            if not isinstance(action, dict):
                raise BadRequest(f"{where} must be an object")
            kind = action.get("type")
            if kind not in ACTION_TYPES:
                raise BadRequest(f"{where}.type must be one of {', '.join(ACTION_TYPES)}")
            if kind == "order":
                result.append({"type": kind, **self._refs.order(where, action)})
            elif kind == "recipe_toggle":
                enabled = checked(action, where, "enabled", bool, "a boolean")
                result.append({"type": kind, "instanceId": self._refs.recipe_instance(where, action), "enabled": enabled})
            else:
                params = checked(action, where, "params", dict, "an object")
                result.append({"type": kind, "instanceId": self._refs.recipe_instance(where, action), "params": params})
        return result

    # ---- runtime state (standard users too) ----------------------------------------------------
    def activate(self, mode_id: str) -> bool:
        """Make the mode active and apply its impacts; False (nothing done) when already active."""
        mode = self.get(mode_id)
        if mode.active:
            return False
        self._set_active(mode, True)
        applied = failed = 0
        for impact in mode.ordered_impacts():
            ok, ko = self._apply(mode, impact)
            applied, failed = applied + ok, failed + ko
        log.info("mode %s activated (%d actions applied, %d failed)", mode.name, applied, failed)
        self._bus.emit("mode.activated", modeId=mode.id, modeName=mode.name)
        return True

    def deactivate(self, mode_id: str) -> bool:
        """Make the mode inactive (nothing is reverted); False when it already was."""
        mode = self.get(mode_id)
        if not mode.active:
            return False
        self._set_active(mode, False)
        log.info("mode %s deactivated", mode.name)
        self._bus.emit("mode.deactivated", modeId=mode.id, modeName=mode.name)
        return True

    def apply_to_zone(self, mode_id: str, zone_id: str) -> dict[str, Any]:
        """Apply the mode's impact on one zone only; the mode's state does not change."""
        mode = self.get(mode_id)
        self._zones.get(zone_id)
        impact = mode.impacts.get(zone_id)
        if impact is None:
            raise NotFound(f"Mode {mode.name} has no impact on zone {zone_id}")
        applied, failed = self._apply(mode, impact)
        return {"ok": True, "applied": applied, "failed": failed}

    def _set_active(self, mode: Mode, active: bool) -> None:
        with orm.db_session:
            self._db.Mode[mode.id].set(active=active)
        mode.active = active

    def _apply(self, mode: Mode, impact: Impact) -> tuple[int, int]:
        applied = failed = 0
        for action in list(impact.actions):
            try:
                self._run(mode, action)
                applied += 1
            except Exception as error:  # one failing action never blocks the others
                failed += 1
                message = getattr(error, "message", None) or str(error) or type(error).__name__
                log.warning("mode %s: %s action in zone %s failed: %s", mode.name, action.get("type"), impact.zone_id, message)
        return applied, failed

    def _run(self, mode: Mode, action: dict[str, Any]) -> None:
        kind = action["type"]
        if kind == "order":
            source = {"kind": "mode", "modeId": mode.id, "modeName": mode.name}
            self._orders.execute(action["equipmentId"], action["orderAlias"], action.get("value"), source)
            return
        recipes = self._refs.recipes()
        if recipes is None:
            raise RuntimeError("no recipe service")
        if kind == "recipe_toggle":
            (recipes.enable if action["enabled"] else recipes.disable)(action["instanceId"])
        elif kind == "recipe_params":
            recipes.update_params(action["instanceId"], action["params"])

    # ---- bus ---------------------------------------------------------------------------------
    def _on_zone_removed(self, event: Event) -> None:
        zone_id = event.get("zoneId")
        for mode in self._modes.values():
            if mode.impacts.pop(zone_id, None) is not None:  # the rows went with the zone (cascade)
                self._bus.emit("mode.updated", mode=mode.to_json())
