"""Database entities of the device domain (tables from migration 0003).

Only what describes a device lives here: its volatile state (status, last seen, values and their
times) is in memory and in the snapshot file (``devices/snapshot.py``, migration 0011)."""

from __future__ import annotations

from pony import orm


def define_entities(db: orm.Database) -> None:
    class Device(db.Entity):
        _table_ = "devices"
        id = orm.PrimaryKey(str)
        integration_id = orm.Required(str)
        source_device_id = orm.Required(str)
        name = orm.Required(str)
        name_customised = orm.Required(bool, default=False)
        manufacturer = orm.Optional(str, nullable=True)
        model = orm.Optional(str, nullable=True)
        ieee_address = orm.Optional(str, nullable=True)
        zone_id = orm.Optional(str, nullable=True)
        source = orm.Required(str)
        power_source = orm.Optional(str, nullable=True)
        raw_expose = orm.Optional(orm.Json, nullable=True)
        created_at = orm.Required(int, size=64)
        updated_at = orm.Required(int, size=64)
        orm.composite_key(integration_id, source_device_id)

    class DeviceData(db.Entity):
        _table_ = "device_data"
        id = orm.PrimaryKey(str)
        device_id = orm.Required(str)
        key = orm.Required(str)
        type = orm.Required(str)
        category = orm.Required(str, default="generic")
        unit = orm.Optional(str, nullable=True)
        enum_values = orm.Optional(orm.Json, nullable=True)
        orm.composite_key(device_id, key)

    class DeviceOrder(db.Entity):
        _table_ = "device_orders"
        id = orm.PrimaryKey(str)
        device_id = orm.Required(str)
        key = orm.Required(str)
        type = orm.Required(str)
        category = orm.Optional(str, nullable=True)
        min_value = orm.Optional(float)
        max_value = orm.Optional(float)
        enum_values = orm.Optional(orm.Json, nullable=True)
        unit = orm.Optional(str, nullable=True)
        dispatch_config = orm.Optional(orm.Json, default={})
        value_schema = orm.Optional(orm.Json, nullable=True)
        orm.composite_key(device_id, key)

    class BatteryAlert(db.Entity):
        _table_ = "battery_alerts"
        device_id = orm.PrimaryKey(str)
        level = orm.Required(float)
        raised_at = orm.Required(int, size=64)
        reminded_at = orm.Required(int, size=64)
