"""The narrow device interface an integration gets: its own devices, nothing else of the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hausbox.devices.discovery import DiscoveredDevice
    from hausbox.devices.manager import DeviceManager


class DeviceHandle:
    """What an integration may do to the engine's devices, scoped to that integration's own."""

    __slots__ = ("_manager", "integration_id")

    def __init__(self, manager: "DeviceManager", integration_id: str):
        self._manager = manager
        self.integration_id = integration_id

    def upsert_from_discovery(self, source: str, found: "DiscoveredDevice") -> Any:
        """Create or update a device as the integration discovered it; returns the engine's device."""
        return self._manager.upsert_from_discovery(self.integration_id, source, found)

    def remove_stale(self, present_source_ids: set[str]) -> int:
        """Remove this integration's devices not in ``present_source_ids`` (an empty set removes none)."""
        return self._manager.remove_stale(self.integration_id, present_source_ids)

    def update_data(self, source_device_id: str, payload: dict[str, Any], source_timestamp: str | None = None) -> None:
        """A device reported values (the hot path: in memory, never waits)."""
        self._manager.update_data(self.integration_id, source_device_id, payload, source_timestamp)

    def update_status(self, source_device_id: str, status: str) -> None:
        """``online`` / ``offline`` / ``unknown``."""
        self._manager.update_status(self.integration_id, source_device_id, status)
