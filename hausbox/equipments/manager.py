"""Equipments: what the user sees and controls, bound to device data and orders by alias.

Equipments and their bindings live in memory, indexed by device datum, so a device update
reaches its equipments with one dictionary lookup. ``equipment.data.changed`` is emitted only when
an alias's value changes (or for a repeat that is news, like a second button press).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable

from pony import orm

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.errors import BadRequest, Conflict, NotFound
from hausbox.core.jsonenc import dumps, join_array
from hausbox.devices.categories import repeat_is_news
from hausbox.devices.device import Device
from hausbox.devices.manager import DeviceManager
from hausbox.equipments.equipment import DataBinding, Equipment, OrderBinding
from hausbox.equipments.suggest import suggest
from hausbox.equipments.types import (
    EQUIPMENT_TYPES,
    NO_SEPARATE_SUPPLY,
    SINGLETON_TYPES,
)
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.equipment-manager")

NAME_MAX, DESCRIPTION_MAX = 100, 500


_COLUMNS = ("id", "name", "type", "zone_id", "icon", "description", "enabled", "separate_supply", "require_confirmation", "timed_command", "created_at", "updated_at")


class EquipmentManager:
    def __init__(self, db: orm.Database, bus: EventBus, devices: DeviceManager, zones: ZoneTree):
        self._db = db
        self._bus = bus
        self._devices = devices
        self._zones = zones
        self._equipments: dict[str, Equipment] = {}
        self._by_zone: dict[str, dict[str, Equipment]] = {}  # zone id -> its equipments, by id
        self.changes = 0  # of any equipment: the encoded list is rebuilt when it (or a device) moves
        self._list_cache: tuple[tuple[int, int, str | None], bytes] | None = None
        self._by_datum: dict[str, list[tuple[Equipment, DataBinding]]] = {}
        # Extra fields a feature adds to a data binding's JSON (e.g. freshnessBudgetMs on power).
        self.binding_decorators: list[Callable[[Equipment, DataBinding, Any, dict[str, Any]], None]] = []
        # Extra fields a feature adds to an equipment's JSON (e.g. the armed timed action).
        self.equipment_decorators: list[Callable[[Equipment, dict[str, Any]], None]] = []
        # Checks a feature runs on a PUT before anything is written (e.g. timedCommand validation).
        self.update_validators: list[Callable[[Equipment, dict[str, Any]], None]] = []
        self._load()
        zones.occupied = lambda zone_id: bool(self._by_zone.get(zone_id))
        bus.on("device.data.updated", self._on_device_data)
        bus.on("equipment.updated", self._on_equipment_updated)
        devices.on_removed(self._on_device_keys_removed)

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.Equipment.select():
                equipment = self._equipments[row.id] = Equipment(**{name: getattr(row, name) for name in _COLUMNS})
                self._place(equipment)
            for row in self._db.DataBinding.select():
                equipment = self._equipments.get(row.equipment_id)
                if equipment is not None:
                    self._attach_data(equipment, DataBinding(row.id, row.equipment_id, row.device_data_id, row.alias, row.historize))
            for row in self._db.OrderBinding.select():
                equipment = self._equipments.get(row.equipment_id)
                if equipment is not None:
                    equipment.order_bindings[row.alias] = OrderBinding(row.id, row.equipment_id, row.device_order_id, row.alias, row.category_override)

    def _attach_data(self, equipment: Equipment, binding: DataBinding) -> None:
        equipment.data_bindings[binding.alias] = binding
        self._by_datum.setdefault(binding.device_data_id, []).append((equipment, binding))
        datum = self._devices.datum(binding.device_data_id)
        equipment.data[binding.alias] = datum.value if datum else None

    def _detach_data(self, equipment: Equipment, binding: DataBinding) -> None:
        equipment.data_bindings.pop(binding.alias, None)
        equipment.data.pop(binding.alias, None)
        targets = [t for t in self._by_datum.get(binding.device_data_id, []) if t[1] is not binding]
        if targets:
            self._by_datum[binding.device_data_id] = targets
        else:
            self._by_datum.pop(binding.device_data_id, None)

    # ---- the pipeline ------------------------------------------------------------------------
    def _on_device_data(self, event: Event) -> None:
        targets = self._by_datum.get(event["dataId"])
        if not targets:
            return
        value = event["value"]
        for equipment, binding in targets:
            alias = binding.alias
            previous = equipment.data.get(alias)
            if previous == value and type(previous) is type(value):
                datum = self._devices.datum(binding.device_data_id)
                if datum is None or not repeat_is_news(datum.category, datum.unit):
                    continue
            equipment.data[alias] = value
            self._changed(equipment)
            changed = {"equipmentId": equipment.id, "alias": alias, "value": value, "previous": previous}
            if "sourceTimestamp" in event:
                changed["sourceTimestamp"] = event["sourceTimestamp"]
            self._bus.emit("equipment.data.changed", **changed)

    def _on_equipment_updated(self, event: Event) -> None:
        equipment = self._equipments.get(event["equipment"]["id"])
        if equipment is not None:
            self._changed(equipment)

    def _on_device_keys_removed(self, data_ids: set[str], order_ids: set[str]) -> None:
        for equipment in self._equipments.values():
            for binding in [b for b in equipment.data_bindings.values() if b.device_data_id in data_ids]:
                self._detach_data(equipment, binding)
            for alias in [a for a, b in equipment.order_bindings.items() if b.device_order_id in order_ids]:
                del equipment.order_bindings[alias]

    # ---- reads -------------------------------------------------------------------------------
    def get(self, equipment_id: str) -> Equipment | None:
        return self._equipments.get(equipment_id)

    def require(self, equipment_id: str) -> Equipment:
        equipment = self._equipments.get(equipment_id)
        if equipment is None:
            raise NotFound(f"Equipment not found: {equipment_id}")
        return equipment

    def all(self) -> list[Equipment]:
        return sorted(self._equipments.values(), key=lambda e: (e.name.lower(), e.id))

    def in_zone(self, zone_id: str) -> list[Equipment]:
        return list(self._by_zone.get(zone_id, {}).values())

    def _place(self, equipment: Equipment, previous_zone: str | None = None) -> None:
        """Keep the zone index right after an equipment arrives or moves."""
        if previous_zone is not None:
            self._by_zone.get(previous_zone, {}).pop(equipment.id, None)
        self._by_zone.setdefault(equipment.zone_id, {})[equipment.id] = equipment

    def device_ids(self, equipment: Equipment) -> set[str]:
        """The devices an equipment is bound to."""
        ids = {d.device.id for d in (self._devices.datum(b.device_data_id) for b in equipment.data_bindings.values()) if d}
        return ids | {o.device.id for o in (self._devices.order(b.device_order_id) for b in equipment.order_bindings.values()) if o}

    def is_online(self, equipment: Equipment) -> bool:
        """Online when a device it is bound to is online (an equipment with no device is not)."""
        return any(self._devices.get(i).status == "online" for i in self.device_ids(equipment))

    def datum_of(self, equipment: Equipment, alias: str) -> Any:
        binding = equipment.data_bindings.get(alias)
        return self._devices.datum(binding.device_data_id) if binding else None

    def order_of(self, equipment: Equipment, alias: str) -> Any:
        binding = equipment.order_bindings.get(alias)
        return self._devices.order(binding.device_order_id) if binding else None

    def order_category(self, equipment: Equipment, binding: OrderBinding) -> str | None:
        order = self._devices.order(binding.device_order_id)
        return binding.category_override or (order.category if order else None)

    def suggest_devices(self, equipment_type: str) -> list[dict[str, Any]]:
        """Devices compatible with ``equipment_type`` (``GET /devices/suggest``); see equipments/suggest.py."""
        return suggest(self._devices.all(), equipment_type)

    def data_binding_json(self, equipment: Equipment, binding: DataBinding) -> dict[str, Any]:
        datum = self._devices.datum(binding.device_data_id)
        body: dict[str, Any] = {"id": binding.id, "equipmentId": equipment.id, "deviceDataId": binding.device_data_id, "alias": binding.alias}
        if binding.historize is not None:
            body["historize"] = binding.historize
        if datum is not None:
            body.update(
                deviceId=datum.device.id, deviceName=datum.device.name, key=datum.key, type=datum.type, category=datum.category,
                value=datum.value, lastUpdated=iso_utc(datum.last_updated), lastChanged=iso_utc(datum.last_changed),
            )  # fmt: skip
            if datum.unit:
                body["unit"] = datum.unit
            if datum.enum_values:
                body["enumValues"] = datum.enum_values
        for decorate in self.binding_decorators:
            decorate(equipment, binding, datum, body)
        return body

    def order_binding_json(self, equipment: Equipment, binding: OrderBinding) -> dict[str, Any]:
        order = self._devices.order(binding.device_order_id)
        body: dict[str, Any] = {"id": binding.id, "equipmentId": equipment.id, "deviceOrderId": binding.device_order_id, "alias": binding.alias}
        if order is not None:
            body.update(deviceId=order.device.id, deviceName=order.device.name, key=order.key, type=order.type)
            category = binding.category_override or order.category
            for name, value in (("category", category), ("min", order.min), ("max", order.max), ("enumValues", order.enum_values), ("unit", order.unit)):
                if value is not None:
                    body[name] = value
        return body

    def _changed(self, equipment: Equipment) -> None:
        equipment.version += 1
        self.changes += 1

    def list_bytes(self, equipment_type: str | None = None) -> bytes:
        """``GET /equipments`` (optionally of one type), encoded; rebuilt only after a change."""
        key = (self.changes, Device.changes, equipment_type)
        cached = self._list_cache
        if cached is None or cached[0] != key:
            chosen = [e for e in self.all() if not equipment_type or e.type == equipment_type]
            cached = self._list_cache = (key, join_array([self.json_bytes(e) for e in chosen]))
        return cached[1]

    def json_bytes(self, equipment: Equipment) -> bytes:
        """The encoded JSON, rebuilt only when the equipment or a device it is bound to changed."""
        key = (equipment.version, self._device_versions(equipment))
        cached = equipment.cache
        if cached is not None and cached[0] == key:
            return cached[1]
        encoded = dumps(self.to_json(equipment))
        equipment.cache = (key, encoded)
        return encoded

    def _device_versions(self, equipment: Equipment) -> tuple[int, ...]:
        versions = []
        for binding in equipment.data_bindings.values():
            datum = self._devices.datum(binding.device_data_id)
            versions.append(datum.device.version if datum else -1)
        for binding in equipment.order_bindings.values():
            order = self._devices.order(binding.device_order_id)
            versions.append(order.device.version if order else -1)
        return tuple(versions)

    def to_json(self, equipment: Equipment) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": equipment.id,
            "name": equipment.name,
            "type": equipment.type,
            "zoneId": equipment.zone_id,
            "icon": equipment.icon,
            "description": equipment.description,
            "enabled": equipment.enabled,
            "separateSupply": equipment.separate_supply,
            "requireConfirmation": equipment.require_confirmation,
            "timedCommand": equipment.timed_command,
            "createdAt": iso_utc(equipment.created_at),
            "updatedAt": iso_utc(equipment.updated_at),
            "dataBindings": [self.data_binding_json(equipment, b) for b in equipment.data_bindings.values()],
            "orderBindings": [self.order_binding_json(equipment, b) for b in equipment.order_bindings.values()],
            "data": dict(equipment.data),
        }
        for decorate in self.equipment_decorators:
            decorate(equipment, body)
        return body

    # ---- writes ------------------------------------------------------------------------------
    def _check_type(self, equipment_type: str, exclude_id: str | None = None) -> None:
        if equipment_type not in EQUIPMENT_TYPES:
            raise BadRequest(f"Invalid equipment type: {equipment_type}")
        if equipment_type in SINGLETON_TYPES and any(e.type == equipment_type and e.id != exclude_id for e in self._equipments.values()):
            raise Conflict(SINGLETON_TYPES[equipment_type])

    def _check_zone(self, zone_id: str) -> None:
        if not self._zones.exists(zone_id):
            raise NotFound(f"Zone not found: {zone_id}")

    def create(self, name: str, equipment_type: str, zone_id: str, icon: str | None = None, description: str | None = None, device_ids: list[str] | None = None) -> dict[str, Any]:
        self._check_type(equipment_type)
        self._check_zone(zone_id)
        stamp = now_ms()
        equipment = Equipment(
            id=str(uuid.uuid4()), name=name.strip(), type=equipment_type, zone_id=zone_id, icon=icon, description=description,
            enabled=True, separate_supply=False, require_confirmation=False, timed_command=None, created_at=stamp, updated_at=stamp,
        )  # fmt: skip
        data_bindings, order_bindings = self._auto_bindings(equipment, device_ids or [])
        with orm.db_session:
            self._db.Equipment(**{name: getattr(equipment, name) for name in _COLUMNS})
            for binding in data_bindings:
                self._db.DataBinding(id=binding.id, equipment_id=equipment.id, device_data_id=binding.device_data_id, alias=binding.alias)
            for binding in order_bindings:
                self._db.OrderBinding(id=binding.id, equipment_id=equipment.id, device_order_id=binding.device_order_id, alias=binding.alias)
        self._equipments[equipment.id] = equipment
        self.changes += 1
        self._place(equipment)
        for binding in data_bindings:
            self._attach_data(equipment, binding)
        for binding in order_bindings:
            equipment.order_bindings[binding.alias] = binding
        body = self.to_json(equipment)
        self._bus.emit("equipment.created", equipment=body)
        return body

    def _auto_bindings(self, equipment: Equipment, device_ids: list[str]) -> tuple[list[DataBinding], list[OrderBinding]]:
        """Bind every datum and order of the given devices by key; the first device wins a clash."""
        data: dict[str, DataBinding] = {}
        orders: dict[str, OrderBinding] = {}
        for device_id in device_ids:
            device = self._devices.get(device_id)
            if device is None:
                raise BadRequest(f"Device not found: {device_id}")
            for key in sorted(device.data):
                data.setdefault(key, DataBinding(str(uuid.uuid4()), equipment.id, device.data[key].id, key))
            for key in sorted(device.orders):
                alias = "command" if equipment.type == "gate" else key
                orders.setdefault(alias, OrderBinding(str(uuid.uuid4()), equipment.id, device.orders[key].id, alias))
        return list(data.values()), list(orders.values())

    def update(self, equipment_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        equipment = self.require(equipment_id)
        new_type = fields.get("type", equipment.type)
        if "type" in fields:
            self._check_type(new_type, exclude_id=equipment_id)
        if "zoneId" in fields:
            self._check_zone(fields["zoneId"])
        if fields.get("separateSupply") and new_type in NO_SEPARATE_SUPPLY:
            raise BadRequest(f"separateSupply is not allowed on a {new_type}")
        for validate in self.update_validators:
            validate(equipment, fields)
        names = {"name": "name", "type": "type", "zoneId": "zone_id", "icon": "icon", "description": "description", "enabled": "enabled", "separateSupply": "separate_supply", "requireConfirmation": "require_confirmation", "timedCommand": "timed_command"}
        changes = {column: fields[field] for field, column in names.items() if field in fields}
        if "name" in changes:
            changes["name"] = changes["name"].strip()
        if new_type in NO_SEPARATE_SUPPLY:
            changes["separate_supply"] = False
        changes["updated_at"] = now_ms()
        previous_zone = equipment.zone_id
        with orm.db_session:
            self._db.Equipment[equipment_id].set(**changes)
        for column, value in changes.items():
            setattr(equipment, column, value)
        self._place(equipment, previous_zone)
        body = self.to_json(equipment)
        self._bus.emit("equipment.updated", equipment=body, previousZoneId=previous_zone)
        return body

    def delete(self, equipment_id: str) -> None:
        equipment = self.require(equipment_id)
        with orm.db_session:
            self._db.Equipment[equipment_id].delete()
        for binding in list(equipment.data_bindings.values()):
            self._detach_data(equipment, binding)
        del self._equipments[equipment_id]
        self.changes += 1
        self._by_zone.get(equipment.zone_id, {}).pop(equipment_id, None)
        self._bus.emit("equipment.removed", equipmentId=equipment_id, equipmentName=equipment.name, zoneId=equipment.zone_id)

    def _announce_bindings(self, equipment: Equipment) -> None:
        """A binding came or went: the equipment stays in its zone, its JSON changed."""
        self._bus.emit("equipment.updated", equipment=self.to_json(equipment), previousZoneId=equipment.zone_id)

    def add_data_binding(self, equipment_id: str, device_data_id: str, alias: str) -> dict[str, Any]:
        equipment = self.require(equipment_id)
        if self._devices.datum(device_data_id) is None:
            raise NotFound(f"Device data not found: {device_data_id}")
        alias = alias.strip()
        if alias in equipment.data_bindings:
            raise Conflict(f'Alias "{alias}" already exists on this equipment')
        binding = DataBinding(str(uuid.uuid4()), equipment_id, device_data_id, alias)
        with orm.db_session:
            self._db.DataBinding(id=binding.id, equipment_id=equipment_id, device_data_id=device_data_id, alias=alias)
        self._attach_data(equipment, binding)
        self._announce_bindings(equipment)
        return self.data_binding_json(equipment, binding)

    def remove_data_binding(self, equipment_id: str, binding_id: str) -> None:
        equipment = self.require(equipment_id)
        binding = next((b for b in equipment.data_bindings.values() if b.id == binding_id), None)
        if binding is None:
            raise NotFound(f"Data binding not found: {binding_id}")
        with orm.db_session:
            self._db.DataBinding[binding_id].delete()
        self._detach_data(equipment, binding)
        self._announce_bindings(equipment)

    def set_historize(self, equipment_id: str, binding_id: str, historize: int | None) -> None:
        """A data binding's history override (None: the rules decide); caches refresh on equipment.updated."""
        equipment = self.require(equipment_id)
        binding = next((b for b in equipment.data_bindings.values() if b.id == binding_id), None)
        if binding is None:
            raise NotFound(f"Data binding not found: {binding_id}")
        with orm.db_session:
            self._db.DataBinding[binding_id].historize = historize
        binding.historize = historize
        self.changes += 1
        self._announce_bindings(equipment)

    def add_order_binding(self, equipment_id: str, device_order_id: str, alias: str) -> dict[str, Any]:
        equipment = self.require(equipment_id)
        if self._devices.order(device_order_id) is None:
            raise NotFound(f"Device order not found: {device_order_id}")
        alias = alias.strip()
        if alias in equipment.order_bindings:
            raise Conflict(f'Alias "{alias}" already exists on this equipment')
        binding = OrderBinding(str(uuid.uuid4()), equipment_id, device_order_id, alias)
        with orm.db_session:
            self._db.OrderBinding(id=binding.id, equipment_id=equipment_id, device_order_id=device_order_id, alias=alias)
        equipment.order_bindings[alias] = binding
        self._announce_bindings(equipment)
        return self.order_binding_json(equipment, binding)

    def remove_order_binding(self, equipment_id: str, binding_id: str) -> None:
        equipment = self.require(equipment_id)
        alias = next((a for a, b in equipment.order_bindings.items() if b.id == binding_id), None)
        if alias is None:
            raise NotFound(f"Order binding not found: {binding_id}")
        with orm.db_session:
            self._db.OrderBinding[binding_id].delete()
        del equipment.order_bindings[alias]
        self._announce_bindings(equipment)
