"""``GET /equipments`` with its filters: ``?type=`` and the consumption-submeter view ``?role=submeter``."""

from __future__ import annotations

from typing import Any, Callable

from hausbox.core.clock import now_ms
from hausbox.core.errors import BadRequest
from hausbox.core.jsonenc import RawJson
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.types import EQUIPMENT_TYPES, NOT_SUBMETERS

FALLBACK_BUDGET_MS = 10 * 60 * 1000  # the spec's budget when none can be resolved
METERING_CATEGORIES = frozenset({"power", "energy"})
# On/off relay types: with a power or energy measure they are "measuring relays" (smart plugs).
MEASURING_RELAY_TYPES = frozenset({"switch", "water_heater"})


class EquipmentListing:
    def __init__(self, equipments: EquipmentManager, is_online: Callable[[Equipment], bool], budget_ms: Callable[[str], int | None]):
        self._equipments = equipments
        self._is_online = is_online
        self._budget_ms = budget_ms  # freshness budget of a power datum, by datum id

    def list_json(self, equipment_type: str | None, role: str | None) -> list[dict[str, Any]] | RawJson:
        if role not in (None, "", "submeter"):
            raise BadRequest("role must be submeter")
        if role == "submeter" or equipment_type == "energy_meter":
            return self.submeters_json()
        if equipment_type and equipment_type not in EQUIPMENT_TYPES:
            return []
        return RawJson(self._equipments.list_bytes(equipment_type or None))

    def _group(self, equipment: Equipment) -> int | None:
        """0 clamp meters, 1 measuring relays, 2 other measured loads; None: not a submeter.

        A declared ``energy_meter`` counts on its type alone (it lists before its first reading);
        any other type counts when it has a numeric power or energy measure, except the house
        total and production types. A separate-supply meter stays: it is still a consumption
        submeter, shown beside the house balance rather than summed into it.
        """
        if equipment.type in NOT_SUBMETERS:
            return None
        if equipment.type == "energy_meter":
            return 0
        if not any(self._is_metering(equipment, alias) for alias in equipment.data_bindings):
            return None
        return 1 if equipment.type in MEASURING_RELAY_TYPES else 2

    def _is_metering(self, equipment: Equipment, alias: str) -> bool:
        datum = self._equipments.datum_of(equipment, alias)
        return datum is not None and datum.type == "number" and (datum.category in METERING_CATEGORIES or alias in METERING_CATEGORIES)

    def power_reading_current(self, equipment: Equipment) -> bool | None:
        datum = self._equipments.datum_of(equipment, "power")
        if datum is None or datum.category != "power":  # else the first power measure, whatever its alias
            datum = next((d for d in (self._equipments.datum_of(equipment, a) for a in equipment.data_bindings) if d is not None and d.category == "power"), None)
        if datum is None or datum.category != "power" or isinstance(datum.value, bool) or not isinstance(datum.value, (int, float)):
            return None
        if not self._is_online(equipment) or datum.last_updated is None:
            return False
        budget = self._budget_ms(datum.id) or FALLBACK_BUDGET_MS
        return now_ms() - datum.last_updated <= budget

    def submeters(self) -> list[Equipment]:
        """The consumption submeters in the spec's order (also the series of ``/energy/by-usage``)."""
        ranked = []
        for equipment in self._equipments.all():
            group = self._group(equipment)
            if group is not None:
                ranked.append((group, equipment.name.lower(), equipment))
        ranked.sort(key=lambda item: item[:2])
        return [equipment for _, _, equipment in ranked]

    def submeters_json(self) -> list[dict[str, Any]]:
        return [{**self._equipments.to_json(e), "powerReadingCurrent": self.power_reading_current(e)} for e in self.submeters()]
