"""``GET /equipments`` with its filters: ``?type=`` and the consumption-submeter view ``?role=submeter``."""

from __future__ import annotations

from typing import Any, Callable

from hausbox.core.clock import now_ms
from hausbox.core.errors import BadRequest
from hausbox.equipments.manager import Equipment, EquipmentManager
from hausbox.equipments.types import EQUIPMENT_TYPES, NOT_SUBMETERS

FALLBACK_BUDGET_MS = 10 * 60 * 1000  # the spec's budget when none can be resolved


class EquipmentListing:
    def __init__(self, equipments: EquipmentManager, is_online: Callable[[Equipment], bool], budget_ms: Callable[[str], int | None]):
        self._equipments = equipments
        self._is_online = is_online
        self._budget_ms = budget_ms  # freshness budget of a power datum, by datum id

    def list_json(self, equipment_type: str | None, role: str | None) -> list[dict[str, Any]]:
        if role not in (None, "", "submeter"):
            raise BadRequest("role must be submeter")
        if role == "submeter" or equipment_type == "energy_meter":
            return self.submeters_json()
        if equipment_type:
            if equipment_type not in EQUIPMENT_TYPES:
                return []
            return [self._equipments.to_json(e) for e in self._equipments.all() if e.type == equipment_type]
        return [self._equipments.to_json(e) for e in self._equipments.all()]

    def _group(self, equipment: Equipment) -> int | None:
        """0 clamp meters, 1 measuring relays, 2 other measured loads; None: not a submeter."""
        if equipment.type in NOT_SUBMETERS or equipment.separate_supply:
            return None
        if equipment.type == "energy_meter":
            return 0
        if not any(self._category(equipment, alias) in ("power", "energy") for alias in equipment.data_bindings):
            return None
        return 1 if equipment.order_bindings else 2

    def _category(self, equipment: Equipment, alias: str) -> str | None:
        datum = self._equipments.datum_of(equipment, alias)
        return datum.category if datum else None

    def power_reading_current(self, equipment: Equipment) -> bool | None:
        datum = self._equipments.datum_of(equipment, "power")
        if datum is None or datum.category != "power" or isinstance(datum.value, bool) or not isinstance(datum.value, (int, float)):
            return None
        if not self._is_online(equipment) or datum.last_updated is None:
            return False
        budget = self._budget_ms(datum.id) or FALLBACK_BUDGET_MS
        return now_ms() - datum.last_updated <= budget

    def submeters_json(self) -> list[dict[str, Any]]:
        ranked = []
        for equipment in self._equipments.all():
            group = self._group(equipment)
            if group is not None:
                ranked.append((group, equipment.name.lower(), equipment))
        ranked.sort(key=lambda item: item[:2])
        return [{**self._equipments.to_json(e), "powerReadingCurrent": self.power_reading_current(e)} for _, _, e in ranked]
