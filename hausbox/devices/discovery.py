"""What an integration tells the device manager about a device it found (the plugin API's input)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

DataType = Literal["boolean", "number", "enum", "text", "json"]
DATA_TYPES = ("boolean", "number", "enum", "text", "json")


@dataclass
class DataSpec:
    """A readable property: its key in the integration's messages, declared type and category."""

    key: str
    type: DataType
    category: str = "generic"
    unit: str | None = None
    enum_values: list[Any] | None = None


@dataclass
class OrderSpec:
    """A writable property. ``value_schema`` is a JSON Schema for what the other fields cannot say
    of a value (an object's fields, a list's items, a text's format); the engine checks a value
    against it before the order is sent."""

    key: str
    type: DataType
    category: str | None = None
    min: float | None = None
    max: float | None = None
    enum_values: list[Any] | None = None
    unit: str | None = None
    dispatch_config: dict[str, Any] = field(default_factory=dict)  # for plugins of the older order API
    value_schema: dict[str, Any] | None = None


@dataclass
class DiscoveredDevice:
    source_device_id: str  # the integration's stable name for the device (z2m: friendly_name)
    name: str | None = None  # default display name; the source id when None
    manufacturer: str | None = None
    model: str | None = None
    ieee_address: str | None = None
    power_source: str | None = None  # e.g. "mains", "battery"
    data: list[DataSpec] = field(default_factory=list)
    orders: list[OrderSpec] = field(default_factory=list)
    raw_expose: Any = None
