"""Button actions: what a press of a button equipment does.

A binding ``{actionValue, effectType, config}`` belongs to one equipment. When that equipment's
``action`` alias changes (``equipment.data.changed``, alias ``action``; a second identical press
arrives again because ``action`` is a retrigger category), every binding whose ``actionValue``
(stored trimmed) equals the pressed value, as text and exactly (case and spaces count), runs, in
the order the bindings were created.

Effects and their config (checked when written: what they name must exist):

- ``mode_activate`` {modeId}
- ``mode_toggle`` {modeAId, modeBId?}: A active -> deactivate A, then activate B (if any);
  otherwise deactivate B (if active), then activate A
- ``equipment_order`` {equipmentId, orderAlias, value}
- ``recipe_toggle`` {instanceId, enabled}
- ``zone_order`` {zoneId, orderKey, value?}: a zone order over the zone and its descendants

Presses are handled in order by the buttons worker: the pipeline that delivered them (an MQTT
message) never waits for the orders they cause. A failing effect is logged and the others still run.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any, Mapping

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import BadRequest, NotFound
from hausbox.core.workers import Worker
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.modes.references import References, field
from hausbox.modes.service import ModeService
from hausbox.zonecontrol.orders import ZONE_ORDERS, ZoneOrders, needs_value

log = logging.getLogger("hausbox.button-actions")

EFFECT_TYPES = ("mode_activate", "mode_toggle", "equipment_order", "recipe_toggle", "zone_order")
MODE_KEYS = ("modeId", "modeAId", "modeBId")
ACTION_ALIAS = "action"


@dataclass
class Binding:
    id: str
    equipment_id: str
    action_value: str
    effect_type: str
    config: dict[str, Any]
    created_at: int
    updated_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "equipmentId": self.equipment_id,
            "actionValue": self.action_value,
            "effectType": self.effect_type,
            "config": dict(self.config),
            "createdAt": iso_utc(self.created_at),
            "updatedAt": iso_utc(self.updated_at),
        }

    def mode_ids(self) -> set[str]:
        if self.effect_type not in ("mode_activate", "mode_toggle"):
            return set()
        return {self.config[key] for key in MODE_KEYS if isinstance(self.config.get(key), str)}


def pressed_text(value: Any) -> str | None:
    """The pressed value as text, as it is compared with ``actionValue`` (None: not a press)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _order(binding: Binding) -> tuple[int, str]:
    return binding.created_at, binding.id


class ButtonActions:
    def __init__(
        self, db: orm.Database, bus: EventBus, worker: Worker, clock: Clock, equipments: EquipmentManager, modes: ModeService,
        orders: OrderService, zone_orders: ZoneOrders, references: References,
    ):  # fmt: skip
        self._db = db
        self._worker = worker
        self._clock = clock
        self._equipments = equipments
        self._modes = modes
        self._orders = orders
        self._zone_orders = zone_orders
        self._refs = references
        self._bindings: dict[str, Binding] = {}
        self._by_equipment: dict[str, list[Binding]] = {}
        self._last_created = 0  # creation stamps are strictly increasing: they order the bindings
        self._load()
        worker.on("equipment.data.changed", self._on_press, accept=self._is_press, outbound=True)
        bus.on("equipment.removed", self._on_equipment_removed)  # a cascade of a user's deletion: in memory, at once

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.ButtonActionBinding.select():
                self._bindings[row.id] = Binding(row.id, row.equipment_id, row.action_value, row.effect_type, dict(row.config or {}), row.created_at, row.updated_at)
                self._last_created = max(self._last_created, row.created_at)
        self._reindex()

    def _reindex(self) -> None:
        index: dict[str, list[Binding]] = {}
        for binding in sorted(self._bindings.values(), key=_order):
            index.setdefault(binding.equipment_id, []).append(binding)
        self._by_equipment = index

    # ---- reads -------------------------------------------------------------------------------
    def list_json(self, equipment_id: str) -> list[dict[str, Any]]:
        self._equipments.require(equipment_id)
        return [b.to_json() for b in self._by_equipment.get(equipment_id, [])]

    def triggers_of_mode(self, mode_id: str) -> list[dict[str, Any]]:
        """Bindings that activate or toggle ``mode_id``, with their equipment's name."""
        found = []
        for binding in sorted(self._bindings.values(), key=_order):
            if mode_id in binding.mode_ids():
                equipment = self._equipments.get(binding.equipment_id)
                found.append({**binding.to_json(), "equipmentName": equipment.name if equipment else None})
        return found

    # ---- writes ------------------------------------------------------------------------------
    def create(self, equipment_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        self._equipments.require(equipment_id)
        effect_type = fields["effectType"]
        config = self.check_config(effect_type, fields.get("config", {}))
        stamp = self._last_created = max(self._clock.now_ms(), self._last_created + 1)
        binding = Binding(str(uuid.uuid4()), equipment_id, fields["actionValue"].strip(), effect_type, config, stamp, stamp)
        with orm.db_session:
            self._db.ButtonActionBinding(
                id=binding.id, equipment_id=equipment_id, action_value=binding.action_value, effect_type=effect_type,
                config=config, created_at=stamp, updated_at=stamp,
            )  # fmt: skip
        self._bindings[binding.id] = binding
        self._reindex()
        return binding.to_json()

    def update(self, equipment_id: str, binding_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        binding = self._binding(equipment_id, binding_id)
        effect_type = fields.get("effectType", binding.effect_type)
        if "config" in fields or effect_type != binding.effect_type:
            config = self.check_config(effect_type, fields.get("config", binding.config if effect_type == binding.effect_type else {}))
        else:
            config = binding.config
        changes = {
            "action_value": fields["actionValue"].strip() if "actionValue" in fields else binding.action_value,
            "effect_type": effect_type,
            "config": config,
            "updated_at": self._clock.now_ms(),
        }
        with orm.db_session:
            self._db.ButtonActionBinding[binding_id].set(**changes)
        for name, value in changes.items():
            setattr(binding, name, value)
        self._reindex()
        return binding.to_json()

    def delete(self, equipment_id: str, binding_id: str) -> None:
        self._binding(equipment_id, binding_id)
        with orm.db_session:
            self._db.ButtonActionBinding[binding_id].delete()
        del self._bindings[binding_id]
        self._reindex()

    def _binding(self, equipment_id: str, binding_id: str) -> Binding:
        self._equipments.require(equipment_id)
        binding = self._bindings.get(binding_id)
        if binding is None or binding.equipment_id != equipment_id:
            raise NotFound(f"Action binding not found: {binding_id}")
        return binding

    def check_config(self, effect_type: str, config: Any) -> dict[str, Any]:
        """The config for ``effect_type``, normalised; BadRequest naming the ``config.<field>``."""
        if effect_type not in EFFECT_TYPES:
            raise BadRequest(f"effectType must be one of {', '.join(EFFECT_TYPES)}")
        if not isinstance(config, dict):
            raise BadRequest("config must be an object")
        where = "config"
        if effect_type == "mode_activate":
            return {"modeId": self._mode(config, "modeId")}
        if effect_type == "mode_toggle":
            mode_a = self._mode(config, "modeAId")
            mode_b = self._mode(config, "modeBId", required=False)
            if mode_b == mode_a:
                raise BadRequest("config.modeBId must differ from config.modeAId")
            return {"modeAId": mode_a, **({"modeBId": mode_b} if mode_b else {})}
        if effect_type == "equipment_order":
            return self._refs.order(where, config)
        if effect_type == "recipe_toggle":
            enabled = field(config, where, "enabled", bool, "a boolean")
            return {"instanceId": self._refs.recipe_instance(where, config), "enabled": enabled}
        # zone_order
        zone_id = self._refs.zone(where, config)
        order_key = field(config, where, "orderKey", str, "a string")
        spec = ZONE_ORDERS.get(order_key)
        if spec is None:
            raise BadRequest(f"config.orderKey must be one of {', '.join(ZONE_ORDERS)}")
        value = config.get("value")
        if needs_value(order_key) and value is None:
            raise BadRequest(f"config.value is required for {order_key}")
        return {"zoneId": zone_id, "orderKey": order_key, **({"value": value} if value is not None else {})}

    def _mode(self, config: Mapping[str, Any], key: str, required: bool = True) -> str | None:
        mode_id = field(config, "config", key, str, "a string", required=required)
        if mode_id is not None and not self._modes.exists(mode_id):
            raise BadRequest(f"config.{key}: mode not found: {mode_id}")
        return mode_id

    # ---- presses -----------------------------------------------------------------------------
    def _is_press(self, event: Event) -> bool:
        return event.get("alias") == ACTION_ALIAS and event.get("equipmentId") in self._by_equipment

    def _on_press(self, event: Event) -> None:
        bindings = self._by_equipment.get(event.get("equipmentId"))
        if not bindings:
            return
        pressed = pressed_text(event.get("value"))
        matching = [b for b in bindings if b.action_value == pressed] if pressed is not None else []
        if matching:
            self._run(event["equipmentId"], pressed, matching)

    def _run(self, equipment_id: str, pressed: str, bindings: list[Binding]) -> None:
        equipment = self._equipments.get(equipment_id)
        if equipment is None or not equipment.enabled:
            return
        for binding in bindings:
            try:
                self._effect(equipment, binding)
            except Exception as error:  # one failing binding never blocks the others
                message = getattr(error, "message", None) or str(error) or type(error).__name__
                log.warning("button %s, action %s: %s failed: %s", equipment.name, pressed, binding.effect_type, message)

    def _effect(self, button: Any, binding: Binding) -> None:
        config, kind = binding.config, binding.effect_type
        if kind == "mode_activate":
            self._modes.activate(config["modeId"])
        elif kind == "mode_toggle":
            mode_a, mode_b = config["modeAId"], config.get("modeBId")
            if self._modes.is_active(mode_a):
                self._modes.deactivate(mode_a)
                if mode_b:
                    self._modes.activate(mode_b)
            else:
                if mode_b and self._modes.exists(mode_b) and self._modes.is_active(mode_b):
                    self._modes.deactivate(mode_b)
                self._modes.activate(mode_a)
        elif kind == "equipment_order":
            self._orders.execute(config["equipmentId"], config["orderAlias"], config.get("value"), self._source(button, binding))
        elif kind == "recipe_toggle":
            recipes = self._refs.recipes()
            if recipes is None:
                raise RuntimeError("no recipe service")
            (recipes.enable if config["enabled"] else recipes.disable)(config["instanceId"])
        elif kind == "zone_order":
            self._zone_orders.execute(config["zoneId"], config["orderKey"], config.get("value"), self._source(button, binding))

    @staticmethod
    def _source(button: Any, binding: Any) -> dict[str, Any]:
        return {"kind": "button", "equipmentId": button.id, "equipmentName": button.name, "bindingId": binding.id, "actionValue": binding.action_value}

    def join(self, timeout: float | None = None) -> None:
        """Wait for the presses being handled (tests)."""
        self._worker.drain(timeout)

    # ---- bus ---------------------------------------------------------------------------------
    def _on_equipment_removed(self, event: Event) -> None:
        equipment_id = event.get("equipmentId")
        gone = [b.id for b in self._bindings.values() if b.equipment_id == equipment_id]
        for binding_id in gone:  # the rows went with the equipment (cascade)
            del self._bindings[binding_id]
        if gone:
            self._reindex()
