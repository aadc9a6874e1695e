"""VMC speed: the virtual order ``speed`` (``off``, ``v1``, ``v2``) of a two-speed ventilation unit.

A ``vmc`` equipment binds its low-speed relay order under the alias ``low`` (required) and its
high-speed relay under ``high`` (optional). The motor must never have both windings energised: every
transition is break before make, the relay to switch off is sent first and the other one is
switched on only once that order went out. When the OFF cannot be sent, nothing is switched on.
"""

from __future__ import annotations

from typing import Any

from hausbox.core.errors import BadRequest
from hausbox.devices.device import Order
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService

ALIAS = "speed"
SPEEDS = ("off", "v1", "v2")


def relay_value(order: Order, on: bool) -> Any:
    """The ON / OFF value in the relay order's own vocabulary."""
    if order.type == "boolean":
        return on
    word = "ON" if on else "OFF"
    for allowed in order.enum_values or ():
        if isinstance(allowed, str) and allowed.upper() == word:
            return allowed
    if order.type == "number":
        return 1 if on else 0
    return word


def plan(speed: str, has_high: bool) -> list[tuple[str, bool]]:
    """The relay steps ``(alias, on)`` to reach ``speed``: every OFF comes before the ON."""
    if speed == "off":
        return [("high", False), ("low", False)] if has_high else [("low", False)]
    if speed == "v1":
        return [("high", False), ("low", True)] if has_high else [("low", True)]
    if not has_high:
        raise BadRequest("This VMC has no high-speed relay: v2 is unavailable")
    return [("low", False), ("high", True)]


class VmcSpeed:
    def __init__(self, equipments: EquipmentManager, orders: OrderService):
        self._equipments = equipments
        self._orders = orders
        orders.virtual[ALIAS] = self.execute

    def execute(self, equipment: Equipment, value: Any, source: dict[str, Any]) -> dict[str, Any] | None:
        if equipment.type != "vmc":
            return None  # not ours: the order path answers "Order alias not found"
        speed = value.strip().lower() if isinstance(value, str) else None
        if speed not in SPEEDS:
            raise BadRequest(f"value must be one of {', '.join(SPEEDS)}")
        low = self._equipments.order_of(equipment, "low")
        if low is None:
            raise BadRequest("This VMC has no low-speed relay order bound under the alias low")
        high = self._equipments.order_of(equipment, "high")
        relays = {"low": low, "high": high}
        for alias, on in plan(speed, high is not None):
            order = relays[alias]
            # OrderService.send returns only once the order went out and raises when it could
            # not: a failed OFF stops the sequence before anything is switched on.
            self._orders.send(equipment, alias, order, relay_value(order, on), source)
        return {"success": True, "value": speed}
