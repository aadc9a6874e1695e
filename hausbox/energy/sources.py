"""Which equipments and bindings the energy routes read: the main meter, the production meter, the
submeters, and each one's energy bindings (the keys of its sums in the history store)."""

from __future__ import annotations

from typing import Any

from hausbox.history import rules

MAIN_METER_TYPE = "main_energy_meter"
PRODUCTION_TYPES = ("energy_production_meter", "solar_panel")
SELF_CONSUMPTION, INJECTION = "autoconso", "injection"
Key = tuple[str, str]


def first_of_type(equipments: Any, equipment_type: str) -> Any:
    """The equipment of a singleton type (main or production meter), or None."""
    return next((e for e in equipments.all() if e.type == equipment_type), None)


def meter_aliases(equipments: Any, equipment: Any) -> list[str]:
    """The aliases of ``equipment`` whose readings feed the energy sums (``rules.is_meter``)."""
    found = []
    for alias in equipment.data_bindings:
        datum = equipments.datum_of(equipment, alias)
        if rules.is_meter(alias, datum.category if datum else None):
            found.append(alias)
    return found


def energy_keys(equipments: Any, equipment: Any) -> list[Key]:
    """The keys of what ``equipment`` consumed (or produced): its energy bindings but a production
    meter's ``autoconso`` and ``injection``; only ``energy`` when it has it, so a meter bound both to
    its total and to per-tariff indices is not counted twice."""
    aliases = [a for a in meter_aliases(equipments, equipment) if a not in (SELF_CONSUMPTION, INJECTION)]
    if "energy" in aliases:
        aliases = ["energy"]
    return [(equipment.id, alias) for alias in aliases]


def role_of(equipment: Any) -> str:
    if equipment.type == MAIN_METER_TYPE:
        return "main"
    return "production" if equipment.type in PRODUCTION_TYPES else "submeter"


def meter_roles(equipments: Any) -> dict[Key, dict[str, Any]]:
    """Every energy binding of the enabled equipments, with what the arbiter metrics say of it."""
    roles: dict[Key, dict[str, Any]] = {}
    for equipment in equipments.all():
        if equipment.enabled is False:
            continue  # the writer counts nothing of a disabled equipment
        about = {"name": equipment.name, "type": equipment.type, "role": role_of(equipment), "separateSupply": bool(equipment.separate_supply)}
        for alias in meter_aliases(equipments, equipment):
            roles[(equipment.id, alias)] = dict(about)
    return roles
