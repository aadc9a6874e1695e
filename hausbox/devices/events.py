"""The events the device registry emits, with their payloads (checked at emit in tests)."""

from typing import Any, NotRequired, TypedDict

DEVICE_DISCOVERED = "device.discovered"
DEVICE_REMOVED = "device.removed"
DEVICE_STATUS_CHANGED = "device.status_changed"
DEVICE_DATA_UPDATED = "device.data.updated"
DEVICE_HEARTBEAT = "device.heartbeat"


class DeviceDiscovered(TypedDict):
    device: dict[str, Any]


class DeviceRemoved(TypedDict):
    deviceId: str
    deviceName: str


class DeviceStatusChanged(TypedDict):
    deviceId: str
    deviceName: str
    status: str


class DeviceDataUpdated(TypedDict):
    deviceId: str
    deviceName: str
    dataId: str
    key: str
    value: Any
    previous: Any
    timestamp: str
    sourceTimestamp: NotRequired[str]


class DeviceHeartbeat(TypedDict):
    deviceId: str
    timestamp: str


EVENTS = {
    DEVICE_DISCOVERED: DeviceDiscovered,
    DEVICE_REMOVED: DeviceRemoved,
    DEVICE_STATUS_CHANGED: DeviceStatusChanged,
    DEVICE_DATA_UPDATED: DeviceDataUpdated,
    DEVICE_HEARTBEAT: DeviceHeartbeat,
}
