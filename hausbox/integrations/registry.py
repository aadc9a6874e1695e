"""The integration registry: loads integrations, starts and stops them, dispatches orders.

Built-in integrations live in ``hausbox/integrations/builtin/<id>/`` with a ``manifest.json`` and
a ``create(context)`` factory, exactly as a third-party plugin would.

While the outbound gate is closed (shadow mode, an inert instance) integrations still connect and
report (a copy of production shows the house live), but nothing leaves towards the house: an order
or a refresh request is refused with a 503 naming the reason, so a copy never drives real devices.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

import gevent

from hausbox.core.bus import EventBus
from hausbox.core.errors import BadRequest, NotFound, ServiceUnavailable
from hausbox.core.logs import by_actor
from hausbox.core.settings import SettingsStore
from hausbox.core.workers import OutboundGate
from hausbox.devices.device import Device, Order
from hausbox.devices.manager import DeviceManager
from hausbox.integrations.api import Integration, IntegrationContext
from hausbox.sdk.devices import DeviceHandle
from hausbox.sdk.manifest import builtin_manifests

log = logging.getLogger("hausbox.integration-registry")

MASK = "••••••••"
ORDER_TIMEOUT_S = 10.0


class DispatchError(Exception):
    """The integration failed to send an order."""


class Entry:
    def __init__(self, manifest: dict[str, Any], plugin: Integration):
        self.manifest = manifest
        self.plugin = plugin
        self.detail: str | None = None
        self.last_status: str | None = None


class IntegrationRegistry:
    def __init__(self, bus: EventBus, settings: SettingsStore, devices: DeviceManager, data_dir: Path, gate: OutboundGate):
        self._bus = bus
        self._gate = gate
        self._settings = settings
        self._devices = devices
        self._data_dir = data_dir
        self._entries: dict[str, Entry] = {}
        self._started = False
        bus.on("settings.changed", self._on_settings_changed)

    # ---- loading -----------------------------------------------------------------------------
    def load_builtins(self) -> None:
        for module_name, manifest in builtin_manifests("hausbox.integrations.builtin", "integration"):
            self.register(manifest, importlib.import_module(module_name).create)

    def register(self, manifest: dict[str, Any], factory: Any) -> Integration:
        integration_id = manifest["id"]
        folder = self._data_dir / "integrations" / integration_id
        context = IntegrationContext(
            integration_id=integration_id,
            logger=logging.getLogger(f"hausbox.plugin:{integration_id}"),
            bus=self._bus,
            settings=self._settings.scoped(f"integration.{integration_id}."),
            devices=DeviceHandle(self._devices, integration_id),
            data_dir=folder,
            report_status=lambda status, detail=None: self._status_reported(integration_id, status, detail),
        )
        plugin = factory(context)
        self._entries[integration_id] = Entry(manifest, plugin)
        return plugin

    def unregister(self, integration_id: str) -> None:
        """Stop and forget an integration (a plugin disabled or uninstalled); its devices stay."""
        if integration_id in self._entries:
            self._safe_stop(integration_id)
            del self._entries[integration_id]

    def get(self, integration_id: str) -> Integration | None:
        entry = self._entries.get(integration_id)
        return entry.plugin if entry else None

    def _entry(self, integration_id: str) -> Entry:
        entry = self._entries.get(integration_id)
        if entry is None:
            raise NotFound(f"Integration not found: {integration_id}")
        return entry

    # ---- lifecycle ---------------------------------------------------------------------------
    def start_all(self) -> None:
        """Start every configured integration, each in the background: boot never waits on a broker."""
        self._started = True
        if not self._gate.is_open:
            log.warning("integrations start read-only: orders are refused (%s)", self._gate.held_detail)
        for integration_id, entry in self._entries.items():
            if entry.plugin.is_configured():
                gevent.spawn(self._safe_start, integration_id)

    def stop_all(self) -> None:
        self._started = False
        for integration_id in self._entries:
            self._safe_stop(integration_id)

    def _safe_start(self, integration_id: str) -> None:
        entry = self._entries[integration_id]
        try:
            entry.plugin.start()
        except Exception as error:
            entry.detail = str(error)
            log.exception("integration %s failed to start", integration_id)
            self._status_reported(integration_id, "error", str(error))

    def _safe_stop(self, integration_id: str) -> None:
        try:
            self._entries[integration_id].plugin.stop()
        except Exception:
            log.exception("integration %s failed to stop", integration_id)
        self._status_reported(integration_id, "disconnected", None)

    def start(self, integration_id: str, by: str | None = None) -> str:
        self._require_configured(integration_id)
        self._safe_start(integration_id)
        return self._logged(integration_id, "started", by)

    def stop(self, integration_id: str, by: str | None = None) -> str:
        self._entry(integration_id)
        self._safe_stop(integration_id)
        return self._logged(integration_id, "stopped", by)

    def restart(self, integration_id: str, by: str | None = None) -> str:
        self._require_configured(integration_id)
        self._safe_stop(integration_id)
        self._safe_start(integration_id)
        return self._logged(integration_id, "restarted", by)

    def refresh(self, integration_id: str, by: str | None = None) -> None:
        entry = self._entry(integration_id)
        refresh = getattr(entry.plugin, "refresh", None)
        if refresh is None:
            raise BadRequest(f"Integration {integration_id} does not poll: nothing to refresh")
        if entry.plugin.status() != "connected":
            raise BadRequest(f"Integration {integration_id} is not connected")
        self._require_open_gate(integration_id, "A refresh request")
        log.info("integration %s refresh requested%s", integration_id, by_actor(by))
        refresh()

    def _require_configured(self, integration_id: str) -> None:
        if not self._entry(integration_id).plugin.is_configured():
            raise BadRequest(f"Integration {integration_id} is not configured")

    def _require_open_gate(self, integration_id: str, what: str) -> None:
        if not self._gate.is_open:
            raise ServiceUnavailable(f"{what} through {integration_id} refused: {self._gate.held_detail}")

    def _logged(self, integration_id: str, what: str, by: str | None) -> str:
        """The status after an administrator's start or stop, which the log records."""
        status = self.status(integration_id)
        log.info("integration %s %s%s: now %s", integration_id, what, by_actor(by), status)
        return status

    def _on_settings_changed(self, event: dict[str, Any]) -> None:
        touched = {key.split(".")[1] for key in event["keys"] if key.startswith("integration.") and key.count(".") >= 2}
        for integration_id in touched & set(self._entries):
            if self._started:
                gevent.spawn(self._apply_new_settings, integration_id)

    def _apply_new_settings(self, integration_id: str) -> None:
        log.info("settings of %s changed: restarting it", integration_id)
        self._safe_stop(integration_id)
        if self._entries[integration_id].plugin.is_configured():
            self._safe_start(integration_id)

    def _status_reported(self, integration_id: str, status: str, detail: str | None) -> None:
        entry = self._entries.get(integration_id)
        if entry is None:
            return
        entry.detail = detail
        if status == entry.last_status:
            return
        previous, entry.last_status = entry.last_status, status
        if status == "connected":
            self._bus.emit("system.integration.connected", integrationId=integration_id)
        elif previous == "connected":
            self._bus.emit("system.integration.disconnected", integrationId=integration_id)

    # ---- status ------------------------------------------------------------------------------
    def status(self, integration_id: str) -> str:
        plugin = self._entry(integration_id).plugin
        if not plugin.is_configured():
            return "not_configured"
        try:
            return plugin.status()
        except Exception:
            return "error"

    def list_json(self) -> list[dict[str, Any]]:
        return [self._json(integration_id, entry) for integration_id, entry in self._entries.items()]

    def _json(self, integration_id: str, entry: Entry) -> dict[str, Any]:
        plugin = entry.plugin
        schema = plugin.settings_schema()
        secret_keys = {s.key for s in schema if s.secret}
        values = self._settings.with_prefix(f"integration.{integration_id}.")
        counts = self._devices.counts(integration_id)
        status = self.status(integration_id)
        detail_of = getattr(plugin, "status_detail", None)
        detail = detail_of() if detail_of else entry.detail
        body: dict[str, Any] = {
            "id": integration_id,
            "name": plugin.name,
            "description": plugin.description,
            "icon": plugin.icon,
            "version": entry.manifest.get("version"),
            "apiVersion": getattr(plugin, "api_version", 2),
            "status": status,
            "configured": plugin.is_configured(),
            "settings": [s.to_json() for s in schema],
            "settingValues": {k: (MASK if k in secret_keys and v not in (None, "") else v) for k, v in values.items()},
            "deviceCount": counts["total"],
            "offlineDeviceCount": counts["offline"],
            "supportsRefresh": hasattr(plugin, "refresh"),
        }
        if detail and status != "connected":
            body["error"] = detail
        return body

    def health(self) -> dict[str, Any]:
        return {"integrations": {i: {"status": self.status(i)} for i in self._entries}, "devices": self._devices.counts()}

    # ---- orders ------------------------------------------------------------------------------
    def dispatch_order(self, device: Device, order: Order, value: Any) -> None:
        """Send one order through the device's integration; DispatchError when it fails."""
        entry = self._entries.get(device.integration_id)
        if entry is None:
            raise ServiceUnavailable(f"Integration {device.integration_id} is not installed")
        self._require_open_gate(device.integration_id, "An order")
        if self.status(device.integration_id) != "connected":
            raise ServiceUnavailable(f"Integration {device.integration_id} is not connected")
        plugin = entry.plugin
        try:
            with gevent.Timeout(ORDER_TIMEOUT_S, DispatchError(f"no answer from {device.integration_id} in {ORDER_TIMEOUT_S:.0f} s")):
                if getattr(plugin, "api_version", 2) >= 2:
                    plugin.execute_order(device, order.key, value)
                else:
                    plugin.execute_order(device, order.dispatch_config, value)
        except DispatchError:
            raise
        except Exception as error:
            raise DispatchError(str(error) or error.__class__.__name__) from error
