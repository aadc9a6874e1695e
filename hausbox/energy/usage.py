"""``GET /energy/by-usage``'s body: the consumption per submeter, and what is left: pure functions.

One series per consumption submeter (the equipments domain's ``?role=submeter``), in that order,
and ``other``, per bucket the main meter's consumption minus the submeters' sum, floored at 0 (0
with no main meter). Costs value Wh at one rate, the period-weighted average price in EUR/kWh
(``history.average_rate`` of the main meter's grid-side hp/hc totals, the same as
``/energy/history``'s); 0 with no tariff, no main meter or no consumption. ``totalCost`` is what the
breakdown shows: the submeters' costs plus ``otherCost``. A ``separateSupply`` submeter hangs on
another supply, which the main meter does not see: it is kept out of the submeters, their sum,
``other`` and every cost, and shown raw in the ``separateSupply`` array (the key only when there
is one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hausbox.energy.history import wh
from hausbox.energy.periods import Period


@dataclass(frozen=True)
class Series:
    id: str
    name: str
    type: str
    values: Sequence[float]  # Wh per bucket


def _points(times: list[str], values: Sequence[float]) -> list[dict[str, Any]]:
    return [{"time": time, "wh": wh(value)} for time, value in zip(times, values)]


def _cost(total_wh: float, rate: float) -> float:
    return round(total_wh / 1000 * rate, 4)


def usage_body(period: Period, submeters: Sequence[Series], separate: Sequence[Series], main: Sequence[float] | None, rate: float) -> dict[str, Any]:
    """``main``: the main meter's consumption per bucket (None: there is none); ``rate`` in EUR/kWh."""
    times = period.times()
    summed = [sum(values) for values in zip(*(s.values for s in submeters))] if submeters else [0.0] * len(times)
    other = [max(0.0, total - subs) for total, subs in zip(main, summed)] if main is not None else [0.0] * len(times)
    by_equipment, cost_by_equipment, series = {}, {}, []
    for meter in submeters:
        total = sum(meter.values)
        by_equipment[meter.id], cost_by_equipment[meter.id] = wh(total), _cost(total, rate)
        series.append({"id": meter.id, "name": meter.name, "type": meter.type, "points": _points(times, meter.values), "total": wh(total), "cost": cost_by_equipment[meter.id]})
    other_total = sum(other)
    other_cost = _cost(other_total, rate)
    body: dict[str, Any] = {
        **period.head(),
        "submeters": series,
        "other": {"points": _points(times, other), "total": wh(other_total), "cost": other_cost},
    }
    if separate:
        body["separateSupply"] = [
            {"id": meter.id, "name": meter.name, "type": meter.type, "points": _points(times, meter.values), "total": wh(sum(meter.values)), "cost": 0.0}
            for meter in separate
        ]
    body["totals"] = {
        "byEquipment": by_equipment,
        "other": wh(other_total),
        "total": wh(sum(main) if main is not None else sum(summed)),
        "costByEquipment": cost_by_equipment,
        "otherCost": other_cost,
        "totalCost": round(sum(cost_by_equipment.values()) + other_cost, 4),
        "rate": round(rate, 6),
    }
    return body
