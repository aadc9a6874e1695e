"""An equipment as the engine holds it in memory: its bindings by alias, its current data by alias.

The equipment manager owns these objects; everything else reads them.
"""

from __future__ import annotations

from typing import Any


class DataBinding:
    __slots__ = ("id", "equipment_id", "device_data_id", "alias", "historize")

    def __init__(self, id: str, equipment_id: str, device_data_id: str, alias: str, historize: int | None = None):
        self.id, self.equipment_id, self.device_data_id, self.alias, self.historize = id, equipment_id, device_data_id, alias, historize


class OrderBinding:
    __slots__ = ("id", "equipment_id", "device_order_id", "alias", "category_override")

    def __init__(self, id: str, equipment_id: str, device_order_id: str, alias: str, category_override: str | None = None):
        self.id, self.equipment_id, self.device_order_id, self.alias, self.category_override = id, equipment_id, device_order_id, alias, category_override


class Equipment:
    __slots__ = (
        "id", "name", "type", "zone_id", "icon", "description", "enabled", "separate_supply",
        "require_confirmation", "timed_command", "created_at", "updated_at", "data_bindings", "order_bindings", "data",
        "version", "cache",
    )  # fmt: skip

    def __init__(self, **fields: Any):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self.data_bindings: dict[str, DataBinding] = {}
        self.order_bindings: dict[str, OrderBinding] = {}
        self.data: dict[str, Any] = {}
        self.version = 0  # bumped on every change of the equipment itself
        self.cache: tuple[Any, bytes] | None = None  # (versions it was built at, encoded JSON)
