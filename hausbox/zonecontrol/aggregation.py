"""Zone aggregation: each zone's data computed from the equipments inside it, merged up the tree.

A zone's value covers its own equipments and its children's: sums and counts add up, averages come
from merged sums and counts (so they weigh sensors, not rooms), booleans are OR-ed.

The work is incremental, because it sits on the message path: each equipment's *contribution* (its
share of sums, counts and flags) is kept, and a change of one equipment adds ``new - old`` to the
merged totals of its zone and of every ancestor (a zone's totals cover its whole subtree, so they
all move by the same delta). Only the fields of those zones that the delta touches are re-read,
and ``zone.data.changed`` is emitted only for zones whose data really changed. So that adding and
later subtracting leaves no trace, every total is an integer: flags are counts of active bindings,
sums are fixed point (see ``_SCALE``). ``rebuild`` is the from-scratch path; both give identical
totals, hence identical data.
"""

from __future__ import annotations

from typing import Any, Callable

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.jsonenc import dumps
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.types import LIGHT_TYPES, NOT_SUBMETERS
from hausbox.zones.tree import ZoneTree

_COUNTS = (
    "motionSensors", "openDoors", "openWindows", "lightsOn", "lightsTotal", "shuttersOpen", "shuttersTotal",
    "waterValvesOpen", "waterValvesTotal", "displaysOnline", "displaysTotal",
)  # fmt: skip
_FLAGS = ("motion", "waterLeak", "smoke")  # each the number of active bindings; true when > 0
_SUMS = ("temperature", "humidity", "luminosity", "power", "waterFlowTotal", "position")  # each with "<key>#n": how many values
_N = {key: key + "#n" for key in _SUMS}
_TOTALS = (*_SUMS, *_N.values(), *_COUNTS, *_FLAGS)
AGGREGATED_CATEGORIES = frozenset(
    {"temperature", "humidity", "luminosity", "motion", "contact_door", "contact_window", "water_leak", "smoke", "light_state", "shutter_position", "power"}
)
_NO_EXTRAS = {"sunrise": None, "sunset": None, "isDaylight": None}
# Sums are integers in units of 2**-64: exact under any order of additions and subtractions (float
# sums drift, and a drift can flip a rounded average or leave -0.0). Digits below 2**-64 (5e-20) are dropped.
_SCALE = 2.0**64
_LIMIT = 2.0**900  # beyond this a "number" is no measurement (and would overflow the fixed point)
# The first change this long after the last rebuild rebuilds everything instead: that picks up what
# changes without an event (a rediscovery that changes a datum's category, or drops a bound key).
REBASE_MS = 60_000

Contribution = dict[str, int]  # sparse: only the totals an equipment moves


def _active(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.upper() == "ON")


def _open_contact(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.upper() == "OFF")


def _number(value: Any) -> float | None:
    """A finite number, as a float; booleans, text, NaN and infinities are not numbers here."""
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        return float(value) if -_LIMIT < value < _LIMIT else None  # NaN fails both comparisons
    return None


def _fixed(number: float) -> int:
    return int(number * _SCALE)  # the product is exact (a power of two); int() drops what lies below 2**-64


def _add(into: Contribution, key: str, amount: int = 1) -> None:
    into[key] = into.get(key, 0) + amount


def _add_value(into: Contribution, key: str, number: float) -> None:
    _add(into, key, _fixed(number))
    _add(into, _N[key])


def _delta(new: Contribution, old: Contribution) -> Contribution:
    delta = dict(new)
    for key, value in old.items():
        delta[key] = delta.get(key, 0) - value
    return {key: value for key, value in delta.items() if value}


def _mean(t: dict[str, int], key: str, digits: int) -> float | None:
    n = t[_N[key]]
    return round(t[key] / (n * _SCALE), digits) if n else None


def _total(t: dict[str, int], key: str, digits: int) -> float | None:
    return round(t[key] / _SCALE, digits) if t[_N[key]] else None


# Each field of a zone's data read from its totals, in the order the data lists them.
_READERS: dict[str, Callable[[dict[str, int]], Any]] = {
    "temperature": lambda t: _mean(t, "temperature", 1),
    "humidity": lambda t: _mean(t, "humidity", 1),
    "luminosity": lambda t: None if (mean := _mean(t, "luminosity", 0)) is None else int(mean),
    "motion": lambda t: t["motion"] > 0,
    **{key: (lambda t, key=key: t[key]) for key in _COUNTS},
    "waterLeak": lambda t: t["waterLeak"] > 0,
    "smoke": lambda t: t["smoke"] > 0,
    "averageShutterPosition": lambda t: int(round(t["position"] / (n * _SCALE))) if (n := t["position#n"]) else None,
    "power": lambda t: _total(t, "power", 1),
    "waterFlowTotal": lambda t: _total(t, "waterFlowTotal", 2),
}
# The field each total feeds: a change re-reads only the fields its delta touches.
_FIELD_OF = {
    **{key: key for key in (*_COUNTS, *_FLAGS)},
    **{key: key for key in _SUMS}, **{_N[key]: key for key in _SUMS},
    "position": "averageShutterPosition", "position#n": "averageShutterPosition",
}  # fmt: skip


class Accumulator:
    """Totals over a set of equipments: fixed-point sums, how many values each sums, counters, flags."""

    __slots__ = ("totals",)

    def __init__(self) -> None:
        self.totals: dict[str, int] = dict.fromkeys(_TOTALS, 0)

    def add(self, contribution: Contribution, sign: int = 1) -> None:
        totals = self.totals
        for key, value in contribution.items():
            totals[key] += sign * value

    def result(self) -> dict[str, Any]:
        t = self.totals
        return {field: read(t) for field, read in _READERS.items()}


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
        self._contributions: dict[str, tuple[str, Contribution]] = {}  # equipment id -> (zone id, contribution)
        self._merged: dict[str, Accumulator] = {}  # zone id -> the equipments of its whole subtree
        self._chains: dict[str, tuple[str, ...]] = {}  # zone id -> itself and its ancestors, up to the root
        self._data: dict[str, dict[str, Any]] = {}
        self._all_bytes: bytes | None = None
        self._motion_since: dict[str, str | None] = {}
        self._rebase_at = 0
        self._root_id = zones.root().id
        # Extra fields on the root zone (sunrise, sunset, isDaylight) from the sunlight service.
        self.root_extras: Callable[[], dict[str, Any]] = root_extras or (lambda: dict(_NO_EXTRAS))
        bus.on("equipment.data.changed", self._on_equipment_data)
        bus.on("equipment.created", lambda e: self._refresh(e["equipment"]["id"]))
        bus.on("equipment.updated", lambda e: self._refresh(e["equipment"]["id"]))  # type, zone, bindings...
        bus.on("equipment.removed", lambda e: self._refresh(e["equipmentId"]))
        bus.on("device.status_changed", self._on_device_status)
        bus.on("device.removed", lambda e: self.rebuild())  # its bindings went away without an equipment event
        bus.on("sunlight.changed", lambda e: self._publish(self._root_id))
        for name in ("zone.created", "zone.updated", "zone.removed", "system.started"):
            bus.on(name, lambda e: self.rebuild(silent=True))
        self.rebuild(silent=True)

    # ---- triggers ----------------------------------------------------------------------------
    def _on_equipment_data(self, event: Event) -> None:
        equipment = self._equipments.get(event["equipmentId"])
        if equipment is not None and self._counts(equipment, event["alias"]):
            self._refresh(equipment.id)

    def _counts(self, equipment: Equipment, alias: str) -> bool:
        """Whether this alias feeds an aggregate: most messages (energy, link quality) do not."""
        if equipment.type == "water_valve" and alias in ("state", "flow"):
            return True
        datum = self._equipments.datum_of(equipment, alias)
        return datum is not None and datum.category in AGGREGATED_CATEGORIES

    def _on_device_status(self, event: Event) -> None:
        """Only displays count devices online: refresh those bound to this device."""
        device_id, displays = event["deviceId"], []
        for equipment_id in self._contributions:
            equipment = self._equipments.get(equipment_id)
            if equipment is not None and equipment.type == "display" and device_id in self._equipments.device_ids(equipment):
                displays.append(equipment_id)
        if displays:
            self._refresh(*displays)

    # ---- incremental path --------------------------------------------------------------------
    def _refresh(self, *equipment_ids: str) -> None:
        """Rebuild these equipments' contributions, move the totals of their zone chains by the
        difference, then publish each zone of those chains once."""
        if now_ms() >= self._rebase_at:
            self.rebuild()
            return
        # Every total is updated before anything is published: a subscriber that causes another
        # change (a recipe's order echoed back) then finds consistent totals.
        zones: dict[str, None] = {}  # in an order where every zone comes before its ancestors
        touched: set[str] = set()
        for equipment_id in equipment_ids:
            equipment = self._equipments.get(equipment_id)
            old_zone, old = self._contributions.pop(equipment_id, (None, {}))
            new_zone, new = None, {}
            if equipment is not None and equipment.zone_id in self._chains:
                new_zone, new = equipment.zone_id, self._contribution(equipment)
                self._contributions[equipment_id] = (new_zone, new)
            if old_zone == new_zone:
                delta = _delta(new, old)
                if not delta:
                    continue
                chains = (self._apply(new_zone, delta),)
                touched.update(delta)
            else:  # a move (or an arrival, a departure): out of the old chain, into the new one
                chains = (self._apply(old_zone, old, -1), self._apply(new_zone, new))
                touched.update(old, new)
            for chain in chains:
                for zone_id in chain:  # kept at its last place: after any zone below it
                    zones.pop(zone_id, None)
                    zones[zone_id] = None
        fields = {_FIELD_OF[key] for key in touched}
        for zone_id in zones:
            self._publish_fields(zone_id, fields)

    def _apply(self, zone_id: str | None, delta: Contribution, sign: int = 1) -> tuple[str, ...]:
        """Add ``delta`` to the merged totals of the zone and of its ancestors; the chain."""
        chain = self._chains.get(zone_id) if zone_id is not None else None
        if chain is None:
            return ()
        for ancestor in chain:
            self._merged[ancestor].add(delta, sign)
        return chain

    def _publish_fields(self, zone_id: str, fields: set[str]) -> None:
        """``_publish`` when only ``fields`` can have moved: the others are not re-read (the root's
        extras neither: they change with ``sunlight.changed``)."""
        merged, old = self._merged.get(zone_id), self._data.get(zone_id)
        if merged is None or old is None:  # a rebuild under way: it publishes the zone itself
            return
        totals = merged.totals
        changes = {}
        for field in fields:
            value = _READERS[field](totals)
            if value != old[field]:
                changes[field] = value
        if not changes:
            return
        data = {**old, **changes}
        if "motion" in changes:
            self._motion_since[zone_id] = iso_utc(now_ms())
        data["motionSince"] = self._motion_since.get(zone_id) if data["motionSensors"] else None
        self._data[zone_id] = data
        self._all_bytes = None
        self._bus.emit("zone.data.changed", zoneId=zone_id, aggregatedData=data)  # changes has no motionSince

    def _contribution(self, equipment: Equipment) -> Contribution:
        """What one equipment adds to its zone's totals."""
        into: Contribution = {}
        etype = equipment.type
        if etype == "weather":
            return into
        datum_of = self._equipments.datum_of
        for alias in equipment.data_bindings:
            datum = datum_of(equipment, alias)
            if datum is None:
                continue
            category = datum.category
            if category not in AGGREGATED_CATEGORIES:  # battery, link quality, energy...
                continue
            value = equipment.data.get(alias)
            number = _number(value)
            if category == "temperature" and alias == "temperature" and number is not None:
                _add_value(into, "temperature", number)
            elif category == "humidity" and number is not None:
                _add_value(into, "humidity", number)
            elif category == "luminosity" and number is not None:
                _add_value(into, "luminosity", number)
            elif category == "motion":
                _add(into, "motionSensors")
                if _active(value):
                    _add(into, "motion")
            elif category == "contact_door" and _open_contact(value):
                _add(into, "openDoors")
            elif category == "contact_window" and _open_contact(value):
                _add(into, "openWindows")
            elif category in ("water_leak", "smoke") and _active(value):
                _add(into, "waterLeak" if category == "water_leak" else "smoke")
            elif category == "light_state" and etype in LIGHT_TYPES:
                _add(into, "lightsTotal")
                if _active(value):
                    _add(into, "lightsOn")
            elif category == "shutter_position":
                _add(into, "shuttersTotal")
                if number is not None:
                    if number > 0:
                        _add(into, "shuttersOpen")
                    _add_value(into, "position", number)
            elif category == "power" and alias == "power" and number is not None and etype not in NOT_SUBMETERS and not equipment.separate_supply:
                _add_value(into, "power", number)
        if etype == "water_valve":
            _add(into, "waterValvesTotal")
            if _active(equipment.data.get("state")):
                _add(into, "waterValvesOpen")
                flow = _number(equipment.data.get("flow"))
                if flow is not None:
                    _add_value(into, "waterFlowTotal", flow)
        elif etype == "display":
            _add(into, "displaysTotal")
            if self._is_online(equipment):
                _add(into, "displaysOnline")
        return into

    def _publish(self, zone_id: str, silent: bool = False) -> None:
        """Read every field of the zone's merged totals; keep and announce the data if it changed."""
        data = self._merged[zone_id].result()
        old = self._data.get(zone_id)
        if old is None or old["motion"] != data["motion"]:
            self._motion_since[zone_id] = iso_utc(now_ms()) if old is not None else None
        data["motionSince"] = self._motion_since.get(zone_id) if data["motionSensors"] else None
        data.update(self.root_extras() if zone_id == self._root_id else _NO_EXTRAS)
        if data == old:
            return
        self._data[zone_id] = data
        self._all_bytes = None
        if not silent and old is not None and any(old.get(k) != v for k, v in data.items() if k != "motionSince"):
            self._bus.emit("zone.data.changed", zoneId=zone_id, aggregatedData=data)

    # ---- from scratch ------------------------------------------------------------------------
    def rebuild(self, silent: bool = False) -> None:
        """Every contribution and every zone's totals from scratch (tree changes, and now and then)."""
        self._rebase_at = now_ms() + REBASE_MS
        order = self._zones.descendants(self._zones.root().id)  # parents before children
        self._chains = {zone.id: tuple(z.id for z in self._zones.ancestors(zone.id)) for zone in order}
        self._contributions, direct_of = {}, {}
        for zone_id in self._chains:
            direct = direct_of[zone_id] = Accumulator()  # the zone's own equipments
            for equipment in self._equipments.in_zone(zone_id):
                contribution = self._contribution(equipment)
                self._contributions[equipment.id] = (zone_id, contribution)
                direct.add(contribution)
        self._merged = {}
        for zone in reversed(order):  # children before parents
            merged = self._merged[zone.id] = Accumulator()
            merged.add(direct_of[zone.id].totals)
            for child in zone.children:
                merged.add(self._merged[child.id].totals)
        for gone in [z for z in self._data if z not in self._chains]:
            del self._data[gone]
            self._motion_since.pop(gone, None)
            self._all_bytes = None
        for zone in reversed(order):
            self._publish(zone.id, silent)

    def recompute_all(self, silent: bool = False) -> None:
        self.rebuild(silent)

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
