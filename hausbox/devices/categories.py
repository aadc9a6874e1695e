"""Data categories of well-known keys, and the units that go with them.

An integration declares categories at discovery; a message key that was never declared but is
well known (``battery``, ``temperature`` ...) is still kept, with its category from this table.
"""

from __future__ import annotations

from typing import Any

KEY_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(("occupancy", "presence"), "motion"),
    **dict.fromkeys(("temperature", "device_temperature", "soil_temperature", "local_temperature"), "temperature"),
    **dict.fromkeys(("humidity", "soil_moisture"), "humidity"),
    **dict.fromkeys(("pressure", "atmospheric_pressure"), "pressure"),
    **dict.fromkeys(("illuminance", "illuminance_lux"), "luminosity"),
    "contact": "contact_door",
    "brightness": "light_brightness",
    "color_temp": "light_color_temp",
    **dict.fromkeys(("color", "color_xy", "color_hs"), "light_color"),
    **dict.fromkeys(("position", "cover_position"), "shutter_position"),
    **dict.fromkeys(("lock_state", "child_lock"), "lock_state"),
    **dict.fromkeys(("battery", "battery_low"), "battery"),
    "power": "power",
    "energy": "energy",
    **dict.fromkeys(("voltage", "vcc"), "voltage"),
    "current": "current",
    "water_leak": "water_leak",
    "smoke": "smoke",
    "co2": "co2",
    "voc": "voc",
    "noise": "noise",
    **dict.fromkeys(("wind_strength", "wind_angle", "gust_strength", "gust_angle"), "wind"),
    **dict.fromkeys(("rain", "sum_rain_1", "sum_rain_24"), "rain"),
    "action": "action",
}

CATEGORY_UNITS: dict[str, str] = {
    "battery": "%",
    "temperature": "°C",
    "humidity": "%",
    "pressure": "hPa",
    "luminosity": "lx",
    "voltage": "V",
    "current": "A",
    "power": "W",
    "energy": "kWh",
}

# Categories whose repeated identical value is still news (a second press, a new detection).
RETRIGGER_CATEGORIES = frozenset({"action", "motion"})


def repeat_is_news(category: str | None, unit: str | None) -> bool:
    """Whether a value equal to the last one is still an event: a second press, a new detection, or
    a meter that reports the energy of its last interval in Wh (the same amount twice is consumed twice)."""
    return category in RETRIGGER_CATEGORIES or (category == "energy" and unit == "Wh")


def category_of(key: str) -> str:
    return KEY_CATEGORIES.get(key, "generic")


def type_of_value(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (dict, list)):
        return "json"
    return "text"
