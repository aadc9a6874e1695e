"""Generic checks of instance parameters against a recipe's typed slots, before the recipe's own.

Each failure is an :class:`InvalidParams` whose message starts with the parameter's id
(``"timeout: must be a duration like 10m"``, ``"lights[1]: equipment not found: …"``). Unknown
parameters are dropped; absent ones get the slot's default.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from hausbox.core.clock import parse_hhmm
from hausbox.recipes.api import InvalidParams, Recipe, Slot
from hausbox.recipes.helpers import as_text, parse_duration

if TYPE_CHECKING:
    from hausbox.recipes.protocols import ValidationContext

MAX_TEXT = 500
MAX_OBJECT = 10_000  # characters of an object parameter, as compact JSON
MAX_LIST = 100
MAX_DURATION_MS = 31 * 24 * 3_600_000


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value)


def _types_of(slot: Slot) -> list[str]:
    wanted = (slot.constraints or {}).get("equipmentType")
    if wanted is None:
        return []
    return [wanted] if isinstance(wanted, str) else list(wanted)


def _check_one(slot: Slot, where: str, value: Any, ctx: "ValidationContext") -> Any:
    kind = slot.type
    if kind == "zone":
        if not isinstance(value, str):
            raise InvalidParams(f"{where}: must be a zone id")
        if not ctx.zones.exists(value):
            raise InvalidParams(f"{where}: zone not found: {value[:100]}")
        return value
    if kind == "equipment":
        if not isinstance(value, str):
            raise InvalidParams(f"{where}: must be an equipment id")
        equipment = ctx.equipments.get(value)
        if equipment is None:
            raise InvalidParams(f"{where}: equipment not found: {value[:100]}")
        types = _types_of(slot)
        if types and equipment.type not in types:
            raise InvalidParams(f"{where}: must be an equipment of type {' or '.join(types)} ({equipment.name} is a {equipment.type})")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidParams(f"{where}: must be a number")
        low, high = (slot.constraints or {}).get("min"), (slot.constraints or {}).get("max")
        if low is not None and value < low:
            raise InvalidParams(f"{where}: must be at least {low:g}")
        if high is not None and value > high:
            raise InvalidParams(f"{where}: must be at most {high:g}")
        return value
    if kind == "duration":
        try:
            ms = parse_duration(value)
        except ValueError:
            raise InvalidParams(f"{where}: must be a duration like 10m") from None
        if ms > MAX_DURATION_MS:
            raise InvalidParams(f"{where}: must be at most 31 days")
        low, high = (slot.constraints or {}).get("min"), (slot.constraints or {}).get("max")
        if low is not None and ms < low:
            raise InvalidParams(f"{where}: must be at least {low:g} ms")
        if high is not None and ms > high:
            raise InvalidParams(f"{where}: must be at most {high:g} ms")
        return value
    if kind == "time":
        try:
            parse_hhmm(value if isinstance(value, str) else "")
        except ValueError:
            raise InvalidParams(f"{where}: must be a time like 07:30") from None
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidParams(f"{where}: must be true or false")
        return value
    if kind == "text":
        if not isinstance(value, (str, int, float)):
            raise InvalidParams(f"{where}: must be a text")
        text = as_text(value)
        if len(text) > MAX_TEXT:
            raise InvalidParams(f"{where}: must be at most {MAX_TEXT} characters")
        return text
    if kind == "object":
        if not isinstance(value, dict):
            raise InvalidParams(f"{where}: must be an object")
        if len(json.dumps(value, separators=(",", ":"))) > MAX_OBJECT:
            raise InvalidParams(f"{where}: must be at most {MAX_OBJECT} characters of JSON")
        return value
    if kind == "data-key":
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            raise InvalidParams(f"{where}: must be a data key")
        return value.strip()
    raise InvalidParams(f"{where}: unsupported slot type {kind}")


def check_params(recipe: Recipe, params: Any, ctx: "ValidationContext") -> tuple[dict[str, Any], dict[str, Any]]:
    """``(stored, resolved)``: the known parameters as given, and the same with defaults filled in."""
    if not isinstance(params, dict):
        raise InvalidParams("params: must be an object")
    stored: dict[str, Any] = {}
    resolved: dict[str, Any] = {}
    for slot in recipe.slots:
        value = params.get(slot.id)
        if _empty(value):
            if slot.required and slot.default is None:
                raise InvalidParams(f"{slot.id}: is required")
            if slot.default is not None:
                resolved[slot.id] = slot.default
            continue
        if slot.list:
            if not isinstance(value, list):
                raise InvalidParams(f"{slot.id}: must be a list")
            if len(value) > MAX_LIST:
                raise InvalidParams(f"{slot.id}: must have at most {MAX_LIST} items")
            checked = [_check_one(slot, f"{slot.id}[{i}]", item, ctx) for i, item in enumerate(value)]
            if len(set(map(str, checked))) != len(checked):
                raise InvalidParams(f"{slot.id}: must not list the same item twice")
        else:
            checked = _check_one(slot, slot.id, value, ctx)
        stored[slot.id] = checked
        resolved[slot.id] = checked
    return stored, resolved
