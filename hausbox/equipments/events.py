"""The events of equipments and their orders, with their payloads."""

from typing import Any, NotRequired, TypedDict

EQUIPMENT_CREATED = "equipment.created"
EQUIPMENT_UPDATED = "equipment.updated"
EQUIPMENT_REMOVED = "equipment.removed"
EQUIPMENT_DATA_CHANGED = "equipment.data.changed"
ORDER_EXECUTED = "equipment.order.executed"
ORDER_FAILED = "equipment.order.failed"
ORDER_UNCONFIRMED = "equipment.order.unconfirmed"


class EquipmentCreated(TypedDict):
    equipment: dict[str, Any]


class EquipmentUpdated(TypedDict):
    equipment: dict[str, Any]
    previousZoneId: str | None


class EquipmentRemoved(TypedDict):
    equipmentId: str
    equipmentName: str
    zoneId: str | None


class EquipmentDataChanged(TypedDict):
    equipmentId: str
    alias: str
    value: Any
    previous: Any
    sourceTimestamp: NotRequired[str]


class OrderExecuted(TypedDict):
    equipmentId: str
    orderAlias: str
    value: Any
    source: dict[str, Any]


class OrderFailed(TypedDict):
    equipmentId: str
    orderAlias: str
    value: Any
    source: dict[str, Any]
    error: str


class OrderUnconfirmed(TypedDict):
    equipmentId: str
    orderAlias: str
    value: Any
    reason: str


EVENTS = {
    EQUIPMENT_CREATED: EquipmentCreated,
    EQUIPMENT_UPDATED: EquipmentUpdated,
    EQUIPMENT_REMOVED: EquipmentRemoved,
    EQUIPMENT_DATA_CHANGED: EquipmentDataChanged,
    ORDER_EXECUTED: OrderExecuted,
    ORDER_FAILED: OrderFailed,
    ORDER_UNCONFIRMED: OrderUnconfirmed,
}
