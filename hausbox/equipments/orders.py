"""Executing an equipment order: value resolution, dispatch with one retry, alarms and events."""

from __future__ import annotations

import logging
from typing import Any, Callable

import gevent

from hausbox.api.schema import BodyValidator
from hausbox.core.bus import EventBus
from hausbox.core.errors import ApiError, BadRequest, NotFound, ServiceUnavailable
from hausbox.core.values import problem
from hausbox.devices.device import Order
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.integrations.registry import DispatchError, IntegrationRegistry
from hausbox.system.alarms import Alarms

log = logging.getLogger("hausbox.equipment-orders")

RETRY_DELAY_S = 2.0
MANUAL = {"kind": "manual"}


class OrderFailed(ApiError):
    status = 502


def resolve_value(order: Order, value: Any) -> Any:
    """The value to send for ``order``, or a BadRequest saying why not.

    A value the order names (an enum's values, a number's presets such as zigbee2mqtt's ``"warm"``)
    is matched case-insensitively and sent as the order declares it; an enum order takes its first
    value when none is given. Otherwise the value must be of the order's type: a finite number in
    range, a boolean (or ``"true"`` / ``"false"``), a string for text; and it must satisfy the
    order's value schema when it has one (an object's fields, a text's format).
    """
    if order.type == "enum" and (value is None or value == "") and order.enum_values:
        return order.enum_values[0]
    named = _named_value(order.enum_values, value)
    if named is not _UNNAMED:
        return named
    if order.type == "enum":
        raise BadRequest(f"value must be one of {_listed(order.enum_values)}")
    if order.type == "number":
        return _number_in_range(order, value)
    if order.type == "boolean":
        return _boolean(value)
    if order.type == "text" and not isinstance(value, str):
        raise BadRequest("value must be a string")
    if order.value_schema:
        _check_schema(order, value)
    return value


def _check_schema(order: Order, value: Any) -> None:
    """The value against the order's value schema, as the body of the order's route ``{"value": ...}``
    (errors name ``value.<field>``). A schema that is none is the integration's fault, not the caller's."""
    try:
        BodyValidator({"type": "object", "properties": {"value": order.value_schema}}).validate({"value": value})
    except BadRequest:
        raise
    except Exception as error:  # noqa: BLE001 - a schema that is none fails in any way (unchecked: 2 ms each)
        log.warning("order %s of device %s: its value schema is not a JSON Schema (%r)", order.key, order.device.name, error)
        raise OrderFailed(f"the integration declared an invalid value schema for {order.key}") from None


_UNNAMED = object()


def _named_value(names: list[Any] | None, value: Any) -> Any:
    """The declared value ``value`` names (the same value, else a string equal but for case), else _UNNAMED."""
    for allowed in names or ():
        if allowed == value and isinstance(allowed, bool) == isinstance(value, bool):  # True is not 1
            return allowed
    for allowed in names or ():
        if isinstance(value, str) and isinstance(allowed, str) and allowed.lower() == value.lower():
            return allowed
    return _UNNAMED


def _listed(values: list[Any] | None) -> str:
    return ", ".join(map(str, values or ()))


def _number_in_range(order: Order, value: Any) -> int | float:
    if isinstance(value, str):
        try:
            value = float(value) if "." in value else int(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or problem(value) is not None:  # finite, 64-bit
        names = f" or one of {_listed(order.enum_values)}" if order.enum_values else ""
        raise BadRequest(f"value must be a number{names}")
    if _named_value(order.enum_values, value) is not _UNNAMED:
        return value  # "65535", a preset value beyond the range, as text
    if order.min is not None and value < order.min:
        raise BadRequest(f"value must be at least {order.min:g}")
    if order.max is not None and value > order.max:
        raise BadRequest(f"value must be at most {order.max:g}")
    return value


def _boolean(value: Any) -> bool:
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise BadRequest("value must be true or false")
    return value


class OrderService:
    def __init__(self, bus: EventBus, equipments: EquipmentManager, integrations: IntegrationRegistry, alarms: Alarms):
        self._bus = bus
        self._equipments = equipments
        self._integrations = integrations
        self._alarms = alarms
        # Called after an order was sent: (equipment, alias, value, source). Delivery confirmation
        # and timed actions hook in here.
        self.after_send: list[Callable[[Equipment, str, Any, dict[str, Any]], None]] = []
        # Orders an equipment answers itself (virtual aliases such as a VMC's speed):
        # alias -> handler(equipment, value, source) -> result, tried before the bindings.
        self.virtual: dict[str, Callable[[Equipment, Any, dict[str, Any]], dict[str, Any] | None]] = {}

    def execute(self, equipment_id: str, alias: str, value: Any, source: dict[str, Any] | None = None) -> dict[str, Any]:
        equipment = self._equipments.require(equipment_id)
        if not equipment.enabled:
            raise BadRequest("Equipment is disabled")
        source = source or MANUAL
        handler = self.virtual.get(alias)
        if handler is not None and alias not in equipment.order_bindings:
            result = handler(equipment, value, source)
            if result is not None:
                return result
        binding = equipment.order_bindings.get(alias)
        order = self._equipments.order_of(equipment, alias) if binding else None
        if order is None:
            raise NotFound(f"Order alias not found: {alias}")
        value = resolve_value(order, value)
        self.send(equipment, alias, order, value, source)
        return {"success": True, "value": value}

    def send(self, equipment: Equipment, alias: str, order: Order, value: Any, source: dict[str, Any]) -> None:
        """Dispatch (one retry after 2 s); on failure an alarm, ``equipment.order.failed`` and a 5xx."""
        integration_id = order.device.integration_id
        alarm_id = f"order-fail:{integration_id}"
        try:
            try:
                self._integrations.dispatch_order(order.device, order, value)
            except DispatchError as first:
                log.warning("order %s.%s failed (%s): retrying once", equipment.name, alias, first)
                gevent.sleep(RETRY_DELAY_S)
                self._integrations.dispatch_order(order.device, order, value)
        except (DispatchError, ServiceUnavailable) as error:
            message = error.message if isinstance(error, ApiError) else str(error)
            self._alarms.raise_alarm(alarm_id, "error", integration_id, f"Order dispatch failed: {equipment.name} {alias} — {message}")
            self._bus.emit("equipment.order.failed", equipmentId=equipment.id, orderAlias=alias, value=value, error=message, source=source)
            if isinstance(error, ServiceUnavailable):
                raise
            raise OrderFailed(f"Order could not be sent: {message}")
        self._alarms.resolve(alarm_id)
        self._bus.emit("equipment.order.executed", equipmentId=equipment.id, orderAlias=alias, value=value, source=source)
        for hook in self.after_send:
            try:
                hook(equipment, alias, value, source)
            except Exception:
                log.exception("after-send hook failed")
