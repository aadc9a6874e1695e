"""``GET /energy/history``'s body from the sums per bucket: pure functions.

Every value is in Wh. A point keeps the main meter's raw consumption split peak (``hp``) and
off-peak (``hc``), the production meter's ``prod`` (its ``energy``), ``autoconso`` (the part of the
production the home used itself) and ``injection`` (the part sent to the grid). A point's cost is
its raw consumption times the price. The totals are grid-side, as the older engine made them: in
each bucket the self-consumed Wh are taken off ``hp`` and ``hc`` in proportion (each floored at 0),
since the home did not buy them; the totals' costs are those grid-side Wh times the price. Costs
are euros to 4 decimals, all 0 when no tariff is configured (``prices`` None).
"""

from __future__ import annotations

from typing import Any, Sequence

from hausbox.energy.periods import Period

Prices = tuple[float, float] | None  # EUR/kWh, hp and hc


def wh(value: float) -> float:
    return round(value, 4) + 0.0  # + 0.0: never a -0.0


def costs(hp_wh: float, hc_wh: float, prices: Prices) -> dict[str, float]:
    """``cost_hp``, ``cost_hc`` and their sum ``cost_total``, each to 4 decimals."""
    if prices is None:
        return {"cost_hp": 0.0, "cost_hc": 0.0, "cost_total": 0.0}
    cost_hp, cost_hc = round(hp_wh / 1000 * prices[0], 4), round(hc_wh / 1000 * prices[1], 4)
    return {"cost_hp": cost_hp, "cost_hc": cost_hc, "cost_total": round(cost_hp + cost_hc, 4)}


def grid_side(hp: float, hc: float, autoconso: float) -> tuple[float, float]:
    """What a bucket bought from the grid: the self-consumed Wh taken off hp and hc in proportion."""
    consumed = hp + hc
    if autoconso <= 0 or consumed <= 0:
        return hp, hc
    return max(0.0, hp - autoconso * hp / consumed), max(0.0, hc - autoconso * hc / consumed)


def history_body(period: Period, consumption: Sequence[Sequence[float]], production: Sequence[Sequence[float]], prices: Prices) -> dict[str, Any]:
    """``consumption``: ``[hp, hc]`` per bucket; ``production``: ``[prod, autoconso, injection]`` per bucket."""
    points = []
    totals = {"hp": 0.0, "hc": 0.0, "prod": 0.0, "autoconso": 0.0, "injection": 0.0}
    for time, (hp, hc), (prod, autoconso, injection) in zip(period.times(), consumption, production):
        points.append({
            "time": time, "hp": wh(hp), "hc": wh(hc), "prod": wh(prod), "autoconso": wh(autoconso), "injection": wh(injection),
            **costs(hp, hc, prices),
        })  # fmt: skip
        grid_hp, grid_hc = grid_side(hp, hc, autoconso)
        totals["hp"] += grid_hp
        totals["hc"] += grid_hc
        totals["prod"] += prod
        totals["autoconso"] += autoconso
        totals["injection"] += injection
    return {
        **period.head(),
        "points": points,
        "totals": {
            "total_consumption": wh(totals["hp"] + totals["hc"]), "total_hp": wh(totals["hp"]), "total_hc": wh(totals["hc"]),
            "total_production": wh(totals["prod"]), "total_autoconso": wh(totals["autoconso"]), "total_injection": wh(totals["injection"]),
            **costs(totals["hp"], totals["hc"], prices),
        },
    }  # fmt: skip


def average_rate(total_hp: float, total_hc: float, prices: Prices) -> float:
    """EUR/kWh over a period: the hp and hc prices weighted by the period's hp and hc Wh (0 when
    nothing was consumed or no tariff is configured)."""
    if prices is None or total_hp + total_hc <= 0:
        return 0.0
    return (total_hp * prices[0] + total_hc * prices[1]) / (total_hp + total_hc)
