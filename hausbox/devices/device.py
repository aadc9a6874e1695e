"""A device as the engine holds it in memory: its data (readable) and orders (writable).

The device manager owns these objects; everything else reads them. A device's encoded JSON is cached
until ``touched()``, which also bumps the counters that caches built from devices compare.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hausbox.core.clock import iso_utc
from hausbox.core.jsonenc import dumps
from hausbox.core.urls import mask_credentials
from hausbox.devices.discovery import OrderSpec


def stable_id(device_id: str, kind: str, key: str) -> str:
    """The id of a device's datum or order: the same for the same device and key, always."""
    digest = hashlib.sha256(f"{device_id}:{kind}:{key}".encode("utf-8")).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


class Datum:
    __slots__ = ("id", "device", "key", "type", "category", "unit", "enum_values", "value", "last_updated", "last_changed", "unmasked")

    def __init__(self, id: str, device: "Device", key: str, type: str, category: str, unit: str | None, enum_values: list | None):
        self.id, self.device, self.key, self.type = id, device, key, type
        self.category, self.unit, self.enum_values = category, unit, enum_values
        self.value: Any = None
        self.last_updated: int | None = None
        self.last_changed: int | None = None
        self.unmasked: str | None = None  # the value as reported, when ``value`` has credentials masked

    def masked(self, value: Any) -> Any:
        """``value`` as it is shown everywhere (API, events, logs): a URL's credentials masked. The
        value as reported is kept in ``unmasked``, for the camera proxy alone."""
        shown = mask_credentials(value) if isinstance(value, str) else value
        self.unmasked = value if shown is not value else None
        return shown

    def reported(self) -> Any:
        """The value as the device reported it (credentials included): never to be shown."""
        return self.value if self.unmasked is None else self.unmasked

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "deviceId": self.device.id,
            "key": self.key,
            "type": self.type,
            "category": self.category,
            "value": self.value,
            "lastUpdated": iso_utc(self.last_updated),
            "lastChanged": iso_utc(self.last_changed),
        }
        if self.unit:
            body["unit"] = self.unit
        return body


class Order:
    __slots__ = ("id", "device", "key", "type", "category", "min", "max", "enum_values", "unit", "dispatch_config", "value_schema")

    def __init__(self, id: str, device: "Device", spec: OrderSpec):
        self.id, self.device = id, device
        self.key, self.type, self.category = spec.key, spec.type, spec.category
        self.min, self.max, self.enum_values, self.unit = spec.min, spec.max, spec.enum_values, spec.unit
        self.dispatch_config = spec.dispatch_config or {}
        self.value_schema = spec.value_schema

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "deviceId": self.device.id, "key": self.key, "type": self.type}
        for name, value in (("category", self.category), ("min", self.min), ("max", self.max), ("enumValues", self.enum_values), ("unit", self.unit)):
            if value is not None:
                body[name] = value
        return body


class Device:
    __slots__ = (
        "id", "integration_id", "source_device_id", "name", "name_customised", "manufacturer", "model",
        "ieee_address", "zone_id", "source", "status", "power_source", "last_seen", "raw_expose",
        "created_at", "updated_at", "data", "orders", "heartbeat_at", "version", "_json", "_bytes",
    )  # fmt: skip
    changes = 0  # of any device: the encoded device list is rebuilt when it moves

    def __init__(self, **fields: Any):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self.data: dict[str, Datum] = {}
        self.orders: dict[str, Order] = {}
        self.heartbeat_at = 0
        self.version = 0  # bumped on every change: caches built from the device compare it
        self._json = None
        self._bytes: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        """The API form; cached until the device changes (GET /devices serves 500 of these)."""
        if self._json is None:
            self._json = {
                "id": self.id,
                "integrationId": self.integration_id,
                "sourceDeviceId": self.source_device_id,
                "name": self.name,
                "manufacturer": self.manufacturer,
                "model": self.model,
                "ieeeAddress": self.ieee_address,
                "zoneId": self.zone_id,
                "source": self.source,
                "status": self.status,
                "powerSource": self.power_source,
                "lastSeen": iso_utc(self.last_seen),
                "createdAt": iso_utc(self.created_at),
                "updatedAt": iso_utc(self.updated_at),
                "data": [self.data[key].to_json() for key in sorted(self.data)],
                "orders": [self.orders[key].to_json() for key in sorted(self.orders)],
            }
        return self._json

    def json_bytes(self) -> bytes:
        if self._bytes is None:
            self._bytes = dumps(self.to_json())
        return self._bytes

    def touched(self) -> None:
        self.version += 1
        Device.changes += 1
        self._json = self._bytes = None
