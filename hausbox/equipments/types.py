"""Equipment types: the one list of what an equipment can be."""

from __future__ import annotations

EQUIPMENT_TYPES: tuple[str, ...] = (
    "light_onoff", "light_dimmable", "light_color", "switch", "sensor", "button", "thermostat", "heater",
    "shutter", "awning", "gate", "weather", "weather_forecast", "media_player", "appliance",
    "energy_meter", "main_energy_meter", "energy_production_meter", "solar_panel", "ups",
    "water_valve", "water_heater", "pool_pump", "pool_cover", "pool_heat_pump",
    "display", "camera", "vmc",
)  # fmt: skip

LIGHT_TYPES = frozenset({"light_onoff", "light_dimmable", "light_color"})
# Only one of each may exist in a home.
SINGLETON_TYPES = {"main_energy_meter": "A main energy meter already exists", "energy_production_meter": "A production meter already exists"}
# These meter whole supplies; "separate supply" makes no sense on them.
NO_SEPARATE_SUPPLY = frozenset({"main_energy_meter", "energy_production_meter", "solar_panel"})
# Types not counted as consumption submeters even when they measure power.
NOT_SUBMETERS = frozenset({"main_energy_meter", "energy_production_meter", "solar_panel"})
