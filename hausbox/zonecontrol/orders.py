"""Zone-level orders: act on every matching equipment of a zone and of the zones below it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from hausbox.core.errors import ApiError, BadRequest
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.equipments.types import LIGHT_TYPES
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.zone-orders")

_NEEDS_VALUE = object()


@dataclass(frozen=True)
class ZoneOrder:
    types: frozenset[str]
    categories: tuple[str, ...]  # order categories that carry it, in preference order
    value: Any  # the value sent, or _NEEDS_VALUE for the body's value
    fallback_alias: str | None = None  # when no binding has the category


_LIGHT_TOGGLE = ("light_toggle", "toggle_power")
_COVER_MOVE = ("shutter_move",)
ZONE_ORDERS: dict[str, ZoneOrder] = {
    "allLightsOn": ZoneOrder(LIGHT_TYPES, _LIGHT_TOGGLE, "ON", "state"),
    "allLightsOff": ZoneOrder(LIGHT_TYPES, _LIGHT_TOGGLE, "OFF", "state"),
    "allLightsBrightness": ZoneOrder(frozenset({"light_dimmable", "light_color"}), ("set_brightness",), _NEEDS_VALUE, "brightness"),
    "allShuttersOpen": ZoneOrder(frozenset({"shutter"}), _COVER_MOVE, "OPEN", "state"),
    "allShuttersStop": ZoneOrder(frozenset({"shutter"}), _COVER_MOVE, "STOP", "state"),
    "allShuttersClose": ZoneOrder(frozenset({"shutter"}), _COVER_MOVE, "CLOSE", "state"),
    "allAwningsExtend": ZoneOrder(frozenset({"awning"}), _COVER_MOVE, "OPEN", "state"),
    "allAwningsStop": ZoneOrder(frozenset({"awning"}), _COVER_MOVE, "STOP", "state"),
    "allAwningsRetract": ZoneOrder(frozenset({"awning"}), _COVER_MOVE, "CLOSE", "state"),
    "allThermostatsPowerOn": ZoneOrder(frozenset({"thermostat"}), ("toggle_power",), True),
    "allThermostatsPowerOff": ZoneOrder(frozenset({"thermostat"}), ("toggle_power",), False),
    "allThermostatsSetpoint": ZoneOrder(frozenset({"thermostat"}), ("set_setpoint",), _NEEDS_VALUE, "setpoint"),
}


def needs_value(order_key: str) -> bool:
    """Whether a zone order takes its value from the caller (brightness, setpoint)."""
    spec = ZONE_ORDERS.get(order_key)
    return spec is not None and spec.value is _NEEDS_VALUE


class ZoneOrders:
    def __init__(self, zones: ZoneTree, equipments: EquipmentManager, orders: OrderService):
        self._zones = zones
        self._equipments = equipments
        self._orders = orders

    def _alias_for(self, equipment: Equipment, spec: ZoneOrder) -> str | None:
        for category in spec.categories:
            for alias, binding in equipment.order_bindings.items():
                if self._equipments.order_category(equipment, binding) == category:
                    return alias
        if spec.fallback_alias and spec.fallback_alias in equipment.order_bindings:
            return spec.fallback_alias
        return None

    def execute(self, zone_id: str, order_key: str, value: Any, source: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run ``order_key`` on the zone and below; ``source`` says who asked (default: manual)."""
        spec = ZONE_ORDERS.get(order_key)
        if spec is None:
            raise BadRequest(f"Invalid zone order key: {order_key}")
        if needs_value(order_key) and value is None:
            raise BadRequest(f"{order_key} needs a value")
        zones = self._zones.descendants(zone_id)
        sent = spec.value if spec.value is not _NEEDS_VALUE else value
        source = {**(source or {"kind": "manual"}), "zoneOrder": order_key, "zoneId": zone_id}
        executed, errors = 0, []
        for zone in zones:
            for equipment in self._equipments.in_zone(zone.id):
                if equipment.type not in spec.types or not equipment.enabled:
                    continue
                alias = self._alias_for(equipment, spec)
                if alias is None:
                    continue
                try:
                    self._orders.execute(equipment.id, alias, sent, source)
                    executed += 1
                except ApiError as error:
                    errors.append({"equipmentId": equipment.id, "equipmentName": equipment.name, "error": error.message})
        return {"executed": executed, "errors": errors}
