"""Write-time validation of an equipment's ``timedCommand`` (PUT /equipments/:id).

``timedCommand`` is ``{alias, value, revertValue, durationMs, durationStepsMs?}``: ``alias`` names an
order binding of the equipment, ``value`` and ``revertValue`` are strings or null, ``durationMs`` is
an integer from 10 s to 24 h, and ``durationStepsMs`` (optional) holds 2 to 6 strictly increasing
durations in that same range, in which case ``durationMs`` is aligned to the first step. ``null``
clears the config; an absent key leaves it. Registered as an ``update_validators`` entry; it replaces
the body's value with the normalised config (unknown keys dropped) before anything is written.
"""

from __future__ import annotations

from typing import Any

from hausbox.core.errors import BadRequest
from hausbox.equipments.equipment import Equipment

MIN_DURATION_MS = 10_000
MAX_DURATION_MS = 86_400_000
MIN_STEPS, MAX_STEPS = 2, 6


def _duration(value: Any, field: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"timedCommand.{field} must be an integer number of milliseconds")
    if not MIN_DURATION_MS <= value <= MAX_DURATION_MS:
        raise BadRequest(f"timedCommand.{field} must be between {MIN_DURATION_MS} and {MAX_DURATION_MS} ms")
    return value


def normalise(equipment: Equipment, config: Any) -> dict[str, Any] | None:
    """The config to store, or a BadRequest naming the faulty field."""
    if config is None:
        return None
    if not isinstance(config, dict):
        raise BadRequest("timedCommand must be an object or null")
    alias = config.get("alias")
    if not isinstance(alias, str) or not alias.strip():
        raise BadRequest("timedCommand.alias is required (the alias of an order binding)")
    alias = alias.strip()
    if alias not in equipment.order_bindings:
        raise BadRequest(f"timedCommand.alias: no order binding named {alias} on this equipment")
    for field in ("value", "revertValue"):
        if config.get(field) is not None and not isinstance(config[field], str):
            raise BadRequest(f"timedCommand.{field} must be a string or null")
    steps = config.get("durationStepsMs")
    result: dict[str, Any] = {"alias": alias, "value": config.get("value"), "revertValue": config.get("revertValue")}
    if steps is not None:
        if not isinstance(steps, list) or not MIN_STEPS <= len(steps) <= MAX_STEPS:
            raise BadRequest(f"timedCommand.durationStepsMs must be a list of {MIN_STEPS} to {MAX_STEPS} durations")
        steps = [_duration(step, "durationStepsMs") for step in steps]
        if any(later <= earlier for earlier, later in zip(steps, steps[1:])):
            raise BadRequest("timedCommand.durationStepsMs must be strictly increasing")
        if "durationMs" in config and config["durationMs"] is not None:
            _duration(config["durationMs"], "durationMs")
        result["durationMs"] = steps[0]  # aligned to the first step
        result["durationStepsMs"] = steps
    else:
        if config.get("durationMs") is None:
            raise BadRequest("timedCommand.durationMs is required")
        result["durationMs"] = _duration(config["durationMs"], "durationMs")
    return result


def validate_update(equipment: Equipment, fields: dict[str, Any]) -> None:
    if "timedCommand" in fields:
        fields["timedCommand"] = normalise(equipment, fields["timedCommand"])
