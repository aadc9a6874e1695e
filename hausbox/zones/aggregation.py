"""Zone aggregation: each zone's data computed from the equipments inside it, merged up the tree.

A zone's value is its own accumulator merged with its children's: sums and counts add up, averages
come from merged sums and counts (so they weigh sensors, not rooms), booleans are OR-ed. On an
equipment change only that zone and its ancestors are recomputed, and ``zone.data.changed`` is
emitted only for zones whose data really changed.
"""

from __future__ import annotations

from typing import Any, Callable

from hausbox.core.bus import Event, EventBus
from hausbox.core.jsonenc import dumps
from hausbox.core.clock import iso_utc, now_ms
from hausbox.equipments.manager import Equipment, EquipmentManager
from hausbox.equipments.types import LIGHT_TYPES, NOT_SUBMETERS
from hausbox.zones.tree import ZoneTree

_AVERAGES = {"temperature": 1, "humidity": 1, "luminosity": 0}  # key -> rounding digits
_COUNTS = (
    "motionSensors", "openDoors", "openWindows", "lightsOn", "lightsTotal", "shuttersOpen", "shuttersTotal",
    "waterValvesOpen", "waterValvesTotal", "displaysOnline", "displaysTotal",
)  # fmt: skip
_FLAGS = ("motion", "waterLeak", "smoke")
AGGREGATED_CATEGORIES = frozenset(
    {"temperature", "humidity", "luminosity", "motion", "contact_door", "contact_window", "water_leak", "smoke", "light_state", "shutter_position", "power"}
)
_SUMS = ("power", "waterFlowTotal")


def _active(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.upper() == "ON")


def _open_contact(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.upper() == "OFF")


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class Accumulator:
    __slots__ = ("sums", "counts", "flags", "positions")

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = dict.fromkeys(_COUNTS, 0)
        self.flags: dict[str, bool] = dict.fromkeys(_FLAGS, False)
        self.positions = [0.0, 0]  # sum, count of numeric shutter positions

    def add_average(self, key: str, value: float) -> None:
        self.sums[key] = self.sums.get(key, 0.0) + value
        self.sums[key + "#n"] = self.sums.get(key + "#n", 0) + 1

    def add_sum(self, key: str, value: float) -> None:
        self.sums[key] = self.sums.get(key, 0.0) + value
        self.sums[key + "#n"] = self.sums.get(key + "#n", 0) + 1

    def merge(self, other: "Accumulator") -> None:
        for key, value in other.sums.items():
            self.sums[key] = self.sums.get(key, 0) + value
        for key, value in other.counts.items():
            self.counts[key] += value
        for key, value in other.flags.items():
            self.flags[key] = self.flags[key] or value
        self.positions[0] += other.positions[0]
        self.positions[1] += other.positions[1]

    def result(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for key, digits in _AVERAGES.items():
            n = self.sums.get(key + "#n", 0)
            data[key] = round(self.sums[key] / n, digits) if n else None
            if digits == 0 and data[key] is not None:
                data[key] = int(data[key])
        data["motion"] = self.flags["motion"]
        data.update(self.counts)
        data["waterLeak"], data["smoke"] = self.flags["waterLeak"], self.flags["smoke"]
        data["averageShutterPosition"] = int(round(self.positions[0] / self.positions[1])) if self.positions[1] else None
        data["power"] = round(self.sums["power"], 1) if self.sums.get("power#n") else None
        data["waterFlowTotal"] = round(self.sums["waterFlowTotal"], 2) if self.sums.get("waterFlowTotal#n") else None
        return data


class ZoneAggregator:
    def __init__(
        self,
        bus: EventBus,
        zones: ZoneTree,
        equipments: EquipmentManager,
        is_online: Callable[[Equipment], bool],
        root_extras: Callable[[], dict[str, Any]] | None = None,
    ):
        self._bus = bus
        self._zones = zones
        self._equipments = equipments
        self._is_online = is_online
        self._direct: dict[str, Accumulator] = {}
        self._merged: dict[str, Accumulator] = {}
        self._data: dict[str, dict[str, Any]] = {}
        self._all_bytes: bytes | None = None
        self._motion_since: dict[str, str | None] = {}
        # Extra fields on the root zone (sunrise, sunset, isDaylight) from the sunlight service.
        self.root_extras: Callable[[], dict[str, Any]] = root_extras or (lambda: {"sunrise": None, "sunset": None, "isDaylight": None})
        bus.on("equipment.data.changed", self._on_equipment_data)
        bus.on("equipment.created", lambda e: self.recompute(e["equipment"]["zoneId"]))
        bus.on("equipment.updated", self._on_equipment_updated)
        bus.on("equipment.removed", lambda e: self.recompute(e["zoneId"]))
        bus.on("device.status_changed", self._on_device_status)
        bus.on("sunlight.changed", lambda e: self.recompute(self._zones.root().id))
        for name in ("zone.created", "zone.updated", "zone.removed", "system.started"):
            bus.on(name, lambda e: self.recompute_all(silent=True))
        self.recompute_all(silent=True)

    # ---- triggers ----------------------------------------------------------------------------
    def _on_equipment_data(self, event: Event) -> None:
        equipment = self._equipments.get(event["equipmentId"])
        if equipment is not None and self._counts(equipment, event["alias"]):
            self.recompute(equipment.zone_id)

    def _counts(self, equipment: Equipment, alias: str) -> bool:
        """Whether this alias feeds an aggregate: most messages (energy, link quality) do not."""
        if equipment.type == "water_valve" and alias in ("state", "flow"):
            return True
        datum = self._equipments.datum_of(equipment, alias)
        return datum is not None and datum.category in AGGREGATED_CATEGORIES

    def _on_device_status(self, event: Event) -> None:
        """Only displays count devices online; recompute the zones of those bound to this device."""
        for zone_id in {e.zone_id for e in self._equipments.all() if e.type == "display" and event["deviceId"] in self._equipments.device_ids(e)}:
            self.recompute(zone_id)

    def _on_equipment_updated(self, event: Event) -> None:
        zone_id = event["equipment"]["zoneId"]
        previous = event.get("previousZoneId")
        if previous and previous != zone_id:
            self.recompute(previous)
        self.recompute(zone_id)

    # ---- computation -------------------------------------------------------------------------
    def _accumulate(self, zone_id: str) -> Accumulator:
        acc = Accumulator()
        for equipment in self._equipments.in_zone(zone_id):
            if equipment.type == "weather":
                continue
            self._add_equipment(acc, equipment)
        return acc

    def _add_equipment(self, acc: Accumulator, equipment: Equipment) -> None:
        etype = equipment.type
        for alias, binding in equipment.data_bindings.items():
            datum = self._equipments.datum_of(equipment, alias)
            if datum is None:
                continue
            category, value = datum.category, equipment.data.get(alias)
            number = _number(value)
            if category == "temperature" and alias == "temperature" and number is not None:
                acc.add_average("temperature", number)
            elif category == "humidity" and number is not None:
                acc.add_average("humidity", number)
            elif category == "luminosity" and number is not None:
                acc.add_average("luminosity", number)
            elif category == "motion":
                acc.counts["motionSensors"] += 1
                acc.flags["motion"] = acc.flags["motion"] or _active(value)
            elif category == "contact_door" and _open_contact(value):
                acc.counts["openDoors"] += 1
            elif category == "contact_window" and _open_contact(value):
                acc.counts["openWindows"] += 1
            elif category in ("water_leak", "smoke") and _active(value):
                acc.flags["waterLeak" if category == "water_leak" else "smoke"] = True
            elif category == "light_state" and etype in LIGHT_TYPES:
                acc.counts["lightsTotal"] += 1
                acc.counts["lightsOn"] += _active(value)
            elif category == "shutter_position":
                acc.counts["shuttersTotal"] += 1
                if number is not None:
                    acc.counts["shuttersOpen"] += number > 0
                    acc.positions[0] += number
                    acc.positions[1] += 1
            elif category == "power" and alias == "power" and number is not None and etype not in NOT_SUBMETERS and not equipment.separate_supply:
                acc.add_sum("power", number)
        if etype == "water_valve":
            acc.counts["waterValvesTotal"] += 1
            if _active(equipment.data.get("state")):
                acc.counts["waterValvesOpen"] += 1
                flow = _number(equipment.data.get("flow"))
                if flow is not None:
                    acc.add_sum("waterFlowTotal", flow)
        elif etype == "display":
            acc.counts["displaysTotal"] += 1
            acc.counts["displaysOnline"] += self._is_online(equipment)

    def _merge(self, zone_id: str) -> Accumulator:
        merged = Accumulator()
        merged.merge(self._direct[zone_id])
        for child in self._zones.get(zone_id).children:
            if child.id in self._merged:
                merged.merge(self._merged[child.id])
        return merged

    def _publish(self, zone_id: str, merged: Accumulator, silent: bool) -> None:
        data = merged.result()
        old = self._data.get(zone_id)
        if old is None or old["motion"] != data["motion"]:
            self._motion_since[zone_id] = iso_utc(now_ms()) if old is not None else None
        data["motionSince"] = self._motion_since.get(zone_id) if data["motionSensors"] else None
        data.update(self.root_extras() if zone_id == self._zones.root().id else {"sunrise": None, "sunset": None, "isDaylight": None})
        self._merged[zone_id] = merged
        self._data[zone_id] = data
        self._all_bytes = None
        if not silent and old is not None and any(old.get(k) != v for k, v in data.items() if k != "motionSince"):
            self._bus.emit("zone.data.changed", zoneId=zone_id, aggregatedData=data)

    def recompute(self, zone_id: str, silent: bool = False) -> None:
        """Recompute one zone from its equipments, then re-merge its ancestors."""
        if not self._zones.exists(zone_id):
            return
        self._direct[zone_id] = self._accumulate(zone_id)
        for zone in self._zones.ancestors(zone_id):
            if zone.id not in self._direct:
                self._direct[zone.id] = self._accumulate(zone.id)
            self._publish(zone.id, self._merge(zone.id), silent)

    def recompute_all(self, silent: bool = False) -> None:
        self._direct = {zone.id: self._accumulate(zone.id) for zone in self._zones.all()}
        live = set(self._direct)
        for gone in [z for z in self._data if z not in live]:
            self._data.pop(gone, None)
            self._all_bytes = None
            self._merged.pop(gone, None)
        order = self._zones.descendants(self._zones.root().id)
        for zone in reversed(order):  # children before parents
            self._publish(zone.id, self._merge(zone.id), silent)

    # ---- reads -------------------------------------------------------------------------------
    def data(self, zone_id: str) -> dict[str, Any] | None:
        return self._data.get(zone_id)

    def all_bytes(self) -> bytes:
        """``all_json`` encoded, kept until a zone's data changes."""
        if self._all_bytes is None:
            self._all_bytes = dumps(self._data)
        return self._all_bytes

    def all_json(self) -> dict[str, dict[str, Any]]:
        return dict(self._data)
