"""The energy routes' responses and query parameters as the OpenAPI document shows them.

The tests validate real responses against these schemas, so the document cannot drift from them.
"""

from __future__ import annotations

from typing import Any

from hausbox.api.schema import BOOLEAN, NUMBER, STRING, Schema, array, nullable, obj, one_of
from hausbox.energy.periods import PERIODS, RESOLUTIONS

INTEGER: Schema = {"type": "integer", "minimum": 0}
TIME: Schema = {"type": "string", "description": "ISO 8601 instant in UTC"}
WH: Schema = {"type": "number", "description": "Wh"}
EUR: Schema = {"type": "number", "description": "euros, 4 decimals"}


def closed(required: dict[str, Schema], description: str | None = None, **optional: Schema) -> Schema:
    """An object with exactly these fields (what we send, not what we accept)."""
    schema = obj(required, optional or None, additionalProperties=False)
    if description:
        schema["description"] = description
    return schema


PERIOD_PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "period", "in": "query", "required": False, "description": "Calendar period in the home's local time (default day)", "schema": one_of(*PERIODS)},
    {"name": "date", "in": "query", "required": False, "description": "A day of the period, YYYY-MM-DD (default today, local)", "schema": {"type": "string"}},
)
HEAD = {"period": one_of(*PERIODS), "from": TIME, "to": TIME, "resolution": one_of(*sorted(set(RESOLUTIONS.values())))}
COSTS = {"cost_hp": EUR, "cost_hc": EUR, "cost_total": EUR}

HISTORY = closed(
    {
        **HEAD,
        "points": array(closed({
            "time": TIME, "hp": WH, "hc": WH, "prod": WH, "autoconso": WH, "injection": WH, **COSTS,
        }, "One bucket: raw consumption split hp/hc, production, and raw cost")),  # fmt: skip
        "totals": closed({
            "total_consumption": WH, "total_hp": WH, "total_hc": WH, "total_production": WH, "total_autoconso": WH, "total_injection": WH, **COSTS,
        }, "Grid-side: each bucket's autoconso taken off its hp and hc in proportion; costs of those Wh"),  # fmt: skip
    },
    "Energy per calendar bucket in local time, zero-filled: a day has one point per local hour (23 or 25 on "
    "the DST days), a week 7 daily points from Monday, a month 28 to 31, a year 12 monthly. Wh values; "
    "costs in euros at the current prices (all 0 with no tariff). 400 for a bad period or date, "
    "404 when no main energy meter is configured.",
)

USAGE_POINTS = array(closed({"time": TIME, "wh": WH}))
USAGE_SERIES = closed({"id": STRING, "name": STRING, "type": STRING, "points": USAGE_POINTS, "total": WH, "cost": EUR})
BY_USAGE = closed(
    {
        **HEAD,
        "submeters": array(USAGE_SERIES),
        "other": closed({"points": USAGE_POINTS, "total": WH, "cost": EUR}, "Per bucket, main meter minus the submeters' sum, floored at 0"),
        "totals": closed({
            "byEquipment": {"type": "object", "additionalProperties": WH, "description": "Wh per submeter id"},
            "other": WH,
            "total": WH | {"description": "Wh: the main meter's consumption, or the submeters' sum without one"},
            "costByEquipment": {"type": "object", "additionalProperties": EUR, "description": "euros per submeter id"},
            "otherCost": EUR,
            "totalCost": EUR | {"description": "euros: the submeters' costs plus otherCost"},
            "rate": NUMBER | {"description": "EUR/kWh: hp and hc prices weighted by the period's grid-side hp and hc Wh of the main meter"},
        }),  # fmt: skip
    },
    "Consumption per submeter (the ?role=submeter equipments, in that order), zero-filled on the buckets of "
    "/energy/history, and the residual other. Costs are Wh at the period's rate, 0 with no tariff, no main "
    "meter or no consumption. Submeters with separateSupply are left out of submeters, other and the costs, "
    "and listed raw (cost 0) in separateSupply, a key present only when there is one.",
    separateSupply=array(USAGE_SERIES),
)

METER_COUNTS = {
    "readings": INTEGER | {"description": "readings received since the start"},
    "countedWh": WH | {"description": "Wh added to the energy sums"},
    "resets": INTEGER | {"description": "counters reset: a reading below the baseline (nothing counted) followed by one above it and below the old baseline (counted from the low reading)"},
    "transientDrops": INTEGER | {"description": "readings below the baseline followed by one back at or above it (a device that reported 0 once): counted from the old baseline, never as a whole index"},
    "replacements": INTEGER | {"description": "readings from another device datum than the baseline's (the meter was swapped and bound again): a new baseline, nothing counted"},
    "refused": INTEGER | {"description": "readings not a number, or a negative interval reading: nothing counted"},
}
ARBITER = closed(
    {
        "since": TIME | {"description": "when the counts started (the process start)"},
        "meters": array(closed({
            "equipmentId": STRING, "alias": STRING, "name": STRING, "type": STRING,
            "role": one_of("main", "production", "submeter"), "separateSupply": BOOLEAN,
            "kind": nullable(one_of("cumulative", "interval")) | {"description": "cumulative: a kWh counter counted by difference; interval: Wh per reading; null before a reading"},
            "baseline": nullable(closed({"reading": NUMBER, "at": TIME, "deviceDataId": nullable(STRING)})) | {"description": "the last counter reading counted from (kept across restarts) and the device datum it came from (null: kept before sources were recorded); after a drop below it, until the next reading tells a reset from a transient drop"},
            **METER_COUNTS,
            "lastResetAt": nullable(TIME), "lastReadingAt": nullable(TIME),
        })),  # fmt: skip
        "totals": closed(METER_COUNTS),
    },
    "What the baseline arbiter decided for each energy binding of the enabled equipments: every reading "
    "either adds Wh to the sums (the difference from a counter's baseline, or an interval's Wh), "
    "drops below the baseline (nothing counted; the next reading tells a reset from a transient drop), "
    "starts a new baseline (the first reading, or one from a swapped meter's device), or is refused.",
)

STATUS = closed(
    {
        "available": BOOLEAN | {"description": "a main energy meter exists (its sums are kept)"},
        "hasProduction": BOOLEAN,
        "sources": array(STRING) | {"description": "integrations of the main meter's devices"},
        "lastDataAt": nullable(TIME) | {"description": "the main meter's last reading, or null"},
        "tariffConfigured": BOOLEAN | {"description": "a price is above 0"},
    },
    "Energy availability, sources and whether a tariff is configured",
)
