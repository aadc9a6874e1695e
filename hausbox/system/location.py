"""The home's location settings: ``home.latitude``, ``home.longitude`` and the sunlight offsets.

Values arrive through the generic settings store, as numbers or numeric strings ("48.8566").
``install_validators`` makes the store refuse a bad value (400 naming the key); readers still parse
defensively, since a database written by an older version may hold anything.
"""

from __future__ import annotations

import math
from typing import Any

from hausbox.core.settings import SettingsStore

LATITUDE = "home.latitude"
LONGITUDE = "home.longitude"
SUNRISE_OFFSET = "home.sunriseOffset"  # minutes after sunrise before it counts as daylight
SUNSET_OFFSET = "home.sunsetOffset"  # minutes before sunset when daylight ends
LOCATION_KEYS = (LATITUDE, LONGITUDE)
MAX_OFFSET_MIN = 720  # half a day either way


def as_number(value: Any) -> float | None:
    """A finite float from a number or a numeric string; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _in_range(value: Any, limit: float) -> float | None:
    number = as_number(value)
    return number if number is not None and -limit <= number <= limit else None


def home_location(settings: Any) -> tuple[float, float] | None:
    """``(latitude, longitude)`` when both settings hold valid coordinates, else None."""
    latitude = _in_range(settings.get(LATITUDE), 90.0)
    longitude = _in_range(settings.get(LONGITUDE), 180.0)
    if latitude is None or longitude is None:
        return None
    return latitude, longitude


def offset_minutes(settings: Any, key: str, default: float) -> float:
    number = _in_range(settings.get(key), MAX_OFFSET_MIN)
    return default if number is None else number


def _range_check(limit: float, what: str):
    def check(value: Any) -> None:
        if isinstance(value, str) and not value.strip():
            return  # an emptied form field: no value, as if deleted
        if _in_range(value, limit) is None:
            raise ValueError(f"must be {what} between -{limit:g} and {limit:g}")

    return check


def install_validators(settings: SettingsStore) -> None:
    settings.add_validator(LATITUDE, _range_check(90, "a number"))
    settings.add_validator(LONGITUDE, _range_check(180, "a number"))
    settings.add_validator(SUNRISE_OFFSET, _range_check(MAX_OFFSET_MIN, "a number of minutes"))
    settings.add_validator(SUNSET_OFFSET, _range_check(MAX_OFFSET_MIN, "a number of minutes"))
