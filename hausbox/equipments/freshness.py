"""Freshness budget of power measures: how old a ``power`` reading may be and still count as live.

``freshnessBudgetMs = clamp(2.5 x cadence, 120 000, 1 800 000)``, where the cadence is the median
interval between the recent arrivals of that datum, or else the declared polling interval of its
integration (an optional ``polling_info()`` on the plugin returning ``{"intervalMs": ...}``). With
neither, the budget is unknown (``None``) and the field is left out; clients then use 10 minutes.

Arrivals: a power datum's ``last_updated`` moves on every message, but ``device.data.updated`` is
only emitted when the value changed. So arrivals are read from two places: the changed-value event
(at once), and ``device.heartbeat`` (at most one per device every 5 s), which looks at the device's
power data and records any ``last_updated`` not seen yet. The heartbeat is emitted before the
message's data are applied, so an unchanged reading is recorded one message late: the intervals,
which are all the cadence needs, are exact; arrivals closer together than the heartbeat interval
may be merged, which cannot matter under the 120 s floor. The device manager needs no extra hook:
on the message path this costs one lookup per changed value.
"""

from __future__ import annotations

from collections import deque
from statistics import median
from typing import Any, Callable

from hausbox.core.bus import Event, EventBus
from hausbox.devices.device import Datum
from hausbox.devices.manager import DeviceManager
from hausbox.equipments.equipment import DataBinding, Equipment

MIN_BUDGET_MS = 120_000
MAX_BUDGET_MS = 1_800_000
CADENCE_FACTOR = 2.5
ARRIVALS_KEPT = 10


def clamp_budget(cadence_ms: float) -> int:
    return int(min(MAX_BUDGET_MS, max(MIN_BUDGET_MS, CADENCE_FACTOR * cadence_ms)))


class FreshnessBudget:
    def __init__(self, bus: EventBus, devices: DeviceManager, plugin_of: Callable[[str], Any]):
        self._devices = devices
        self._plugin_of = plugin_of  # integration id -> plugin (or None)
        self._arrivals: dict[str, deque[int]] = {}  # power datum id -> recent arrival times (ms)
        bus.on("device.data.updated", self._on_data)
        bus.on("device.heartbeat", self._on_heartbeat)
        bus.on("device.removed", self._on_device_removed)

    # ---- arrivals ----------------------------------------------------------------------------
    def record(self, datum_id: str, at_ms: int) -> None:
        arrivals = self._arrivals.get(datum_id)
        if arrivals is None:
            arrivals = self._arrivals[datum_id] = deque(maxlen=ARRIVALS_KEPT)
        if not arrivals or at_ms > arrivals[-1]:
            arrivals.append(at_ms)

    def _on_data(self, event: Event) -> None:
        datum = self._devices.datum(event["dataId"])
        if datum is not None and datum.category == "power" and datum.last_updated is not None:
            self.record(datum.id, datum.last_updated)

    def _on_heartbeat(self, event: Event) -> None:
        device = self._devices.get(event["deviceId"])
        if device is None:
            return
        for datum in device.data.values():
            if datum.category == "power" and datum.last_updated is not None:
                self.record(datum.id, datum.last_updated)

    def _on_device_removed(self, _event: Event) -> None:
        for datum_id in [i for i in self._arrivals if self._devices.datum(i) is None]:
            del self._arrivals[datum_id]

    # ---- the budget --------------------------------------------------------------------------
    def cadence_ms(self, datum_id: str) -> float | None:
        arrivals = self._arrivals.get(datum_id)
        if arrivals is not None and len(arrivals) >= 2:
            times = list(arrivals)
            return median(later - earlier for earlier, later in zip(times, times[1:]))
        datum = self._devices.datum(datum_id)
        return self._polling_interval_ms(datum.device.integration_id) if datum is not None else None

    def _polling_interval_ms(self, integration_id: str) -> float | None:
        plugin = self._plugin_of(integration_id)
        polling_info = getattr(plugin, "polling_info", None)
        if polling_info is None:
            return None
        try:
            info = polling_info()
        except Exception:
            return None
        interval = info.get("intervalMs", info.get("interval_ms")) if isinstance(info, dict) else None
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval <= 0:
            return None
        return float(interval)

    def budget_ms(self, datum_id: str) -> int | None:
        """The freshness budget of a power datum, None when it cannot be resolved."""
        cadence = self.cadence_ms(datum_id)
        return clamp_budget(cadence) if cadence is not None else None

    def decorate_binding(self, _equipment: Equipment, _binding: DataBinding, datum: Datum | None, body: dict[str, Any]) -> None:
        """``binding_decorators`` entry: ``freshnessBudgetMs`` on every power binding that has one."""
        if datum is not None and datum.category == "power":
            budget = self.budget_ms(datum.id)
            if budget is not None:
                body["freshnessBudgetMs"] = budget
