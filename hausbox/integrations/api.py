"""The integration plugin API (apiVersion 2). Built-in integrations use exactly this API.

An integration is a package with a ``manifest.json`` (``id``, ``name``, ``version``,
``description``, ``icon``, ``type: "integration"``, ``apiVersion``) and a factory::

    def create(context: IntegrationContext) -> Integration

The context gives the plugin what it may touch and nothing more:

- ``context.logger``: a logger whose module name is ``plugin:<id>`` (secrets are redacted anyway);
- ``context.bus``: the event bus (subscribe to what it needs; emit only spec events);
- ``context.settings``: the settings under ``integration.<id>.`` only (``get``, ``all``, ``set``);
  a change to them restarts the integration, so ``start`` reads them fresh each time;
- ``context.devices``: this integration's devices, and nothing else of the engine
  (``hausbox.sdk.DeviceHandle``): ``upsert_from_discovery(source, DiscoveredDevice)``,
  ``remove_stale(present_source_ids)``, ``update_data(source_device_id, payload,
  source_timestamp=None)`` and ``update_status(source_device_id, "online" | "offline")``;
- ``context.report_status(status, detail=None)``: call it whenever the connection state changes
  (``connected``, ``disconnected``, ``error``); the engine announces it on the bus;
- ``context.data_dir``: a folder of the plugin's own for files.

The returned object has ``id``, ``name``, ``description``, ``icon``, ``api_version`` and:

- ``settings_schema() -> list[SettingDef]``: what the settings page shows;
- ``is_configured() -> bool``: whether the required settings are there (else ``not_configured``);
- ``start()`` and ``stop()``: must return quickly (spawn greenlets for loops); ``start`` may be
  called again after ``stop``;
- ``status() -> str``: one of ``connected``, ``disconnected``, ``error``, ``not_configured``;
- ``execute_order(device, order_key, value)``: send an order; raise an exception to report a
  failure (the engine retries once, then raises an alarm). Plugins declaring ``api_version = 1``
  get the older signature ``execute_order(device, dispatch_config, value)`` instead, where
  ``dispatch_config`` is what the plugin stored on the order at discovery;
- optional ``refresh()`` (polling integrations) and ``status_detail() -> str | None``;
- optional ``polling_info() -> {"intervalMs": int, "lastPollAt": ms | None}`` (polling
  integrations): the declared interval is the cadence of their power data until arrivals tell it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol

if TYPE_CHECKING:
    from hausbox.core.bus import EventBus
    from hausbox.core.settings import ScopedSettings
    from hausbox.devices.device import Device
    from hausbox.sdk.devices import DeviceHandle

API_VERSION = 2
STATUSES = ("connected", "disconnected", "error", "not_configured")
Status = Literal["connected", "disconnected", "error", "not_configured"]


@dataclass(frozen=True)
class SettingDef:
    key: str
    label: str
    type: Literal["text", "password", "number", "boolean"] = "text"
    required: bool = False
    placeholder: str | None = None
    default: Any = None

    @property
    def secret(self) -> bool:
        return self.type == "password"

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"key": self.key, "label": self.label, "type": self.type, "required": self.required}
        if self.placeholder is not None:
            body["placeholder"] = self.placeholder
        if self.default is not None:
            body["defaultValue"] = self.default
        return body


@dataclass
class IntegrationContext:
    integration_id: str
    logger: logging.Logger
    bus: "EventBus"
    settings: "ScopedSettings"
    devices: "DeviceHandle"
    data_dir: Path
    report_status: Callable[[str, str | None], None]


class Integration(Protocol):
    id: str
    name: str
    description: str
    icon: str
    api_version: int

    def settings_schema(self) -> list[SettingDef]: ...

    def is_configured(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def status(self) -> str: ...

    def execute_order(self, device: "Device", order_key: str, value: Any) -> None: ...


Factory = Callable[[IntegrationContext], Integration]
