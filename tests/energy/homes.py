"""A home with energy meters for the energy route tests: meters are fake devices whose readings go
through the real pipeline (the baseline arbiter, the tariff split at the reading's time, the sums)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator

from hausbox.devices.discovery import DataSpec
from tests.inprocess import House

# Off-peak from 22:00 to 06:00 every day (a slot across midnight), peak the rest of the day (a
# window's minutes in no slot count for neither, so peak is a slot too).
SLOTS = [{"start": "22:00", "end": "06:00", "tariff": "hc"}, {"start": "06:00", "end": "22:00", "tariff": "hp"}]
TARIFF = {"schedules": [{"days": [0, 1, 2, 3, 4, 5, 6], "slots": SLOTS}], "prices": {"hp": 0.25, "hc": 0.15}}
NO_PRICES = {"schedules": TARIFF["schedules"], "prices": {"hp": 0, "hc": 0}}


def kwh_counter(key: str = "energy") -> DataSpec:
    """zigbee2mqtt's cumulative ``energy`` reading, in kWh."""
    return DataSpec(key, "number", "energy", "kWh")


def meter(house: House, name: str, equipment_type: str, *keys: str) -> str:
    """An equipment on one device named ``name`` with a kWh counter per key (default ``energy``)."""
    device = house.device(name, [kwh_counter(key) for key in keys or ("energy",)])
    return house.equipment(name, equipment_type, [device])


def main_meter(house: House) -> str:
    return meter(house, "linky", "main_energy_meter")


def production_meter(house: House) -> str:
    return meter(house, "solar", "energy_production_meter", "energy", "autoconso", "injection")


def read_at(house: House, moment: str | datetime, **readings: Any) -> None:
    """Move the clock to ``moment`` (local wall time, or an aware datetime), then each
    ``device=value`` (or ``device={key: value}``) reports."""
    house.advance_to(moment)
    for device, value in readings.items():
        house.report(device, **(value if isinstance(value, dict) else {"energy": value}))


def committed(house: House) -> None:
    house.advance(10)  # past the commit interval: the sums are in the store


def get(house: House, path: str) -> tuple[int, Any]:
    status, _headers, body = house.api("GET", path)
    return status, json.loads(body) if body else None


def ok(house: House, path: str) -> dict[str, Any]:
    status, body = get(house, path)
    assert status == 200, body
    return body


def documented(house: House, path: str) -> dict[str, Any]:
    """The success schema the OpenAPI document gives ``GET path``."""
    document = ok(house, "/openapi.json")
    return document["paths"]["/api/v1" + path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]


def assert_matches(schema: dict[str, Any], body: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(body)]
    assert not errors, errors
