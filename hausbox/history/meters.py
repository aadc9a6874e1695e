"""The baseline arbiter: energy readings in, Wh consumed out, never negative, never counted twice.

Meters report in two ways. zigbee2mqtt's ``energy`` (unit ``kWh``, or no unit) is a cumulative
counter: what was consumed is the difference from the previous reading, the meter's *baseline*. A
meter that reports ``Wh`` gives the energy of its last interval: each reading is consumed as is.
The arbiter decides, for each reading, what it counts:

- the first reading of a counter sets its baseline and counts nothing (there is no interval yet);
- a reading below the baseline means the meter was reset or replaced: it becomes the new baseline
  and counts nothing (counting it whole could add a year of a replaced meter's index at once);
- a negative or non-numeric interval reading counts nothing and is refused.

Baselines are written with the sums in the same transaction, so a restart, even kill -9, continues
from the last committed reading: what was consumed meanwhile is counted by the next reading.
``metrics()`` is ``GET /energy/arbiter/metrics``: what the arbiter decided since the process started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hausbox.core.clock import iso_utc

Key = tuple[str, str]
Kind = Literal["cumulative", "interval"]
WH_PER = {"kWh": 1000.0, "Wh": 1.0, "MWh": 1_000_000.0}


def meter_kind(unit: str | None) -> Kind:
    """``Wh`` meters give an interval's energy; ``kWh`` (zigbee2mqtt's) and unitless ones a counter."""
    return "interval" if unit == "Wh" else "cumulative"


@dataclass
class MeterStats:
    kind: Kind
    unit: str
    readings: int = 0
    counted_wh: float = 0.0
    resets: int = 0
    refused: int = 0
    last_reset_ms: int | None = None
    last_reading_ms: int | None = None


class MeterArbiter:
    def __init__(self, baselines: dict[Key, tuple[float, int]], started_ms: int):
        self._baselines = dict(baselines)  # key -> (reading in the meter's unit, ts)
        self._stats: dict[Key, MeterStats] = {}
        self._started_ms = started_ms

    def consumed(self, key: Key, value: Any, unit: str | None, ts: int) -> tuple[float, tuple[float, int] | None]:
        """``(wh, new_baseline)``: the Wh this reading adds (>= 0) and, for a counter, its new baseline."""
        kind = meter_kind(unit)
        stats = self._stats.get(key)
        if stats is None or stats.kind != kind:
            stats = self._stats[key] = MeterStats(kind, unit or "kWh")
        stats.readings += 1
        stats.last_reading_ms = ts
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            stats.refused += 1
            return 0.0, None
        scale = WH_PER.get(unit or "kWh", 1000.0)
        if kind == "interval":
            if value < 0:
                stats.refused += 1
                return 0.0, None
            stats.counted_wh += value * scale
            return value * scale, None
        baseline = self._baselines.get(key)
        self._baselines[key] = (float(value), ts)
        if baseline is None:
            return 0.0, self._baselines[key]
        if value < baseline[0]:
            stats.resets += 1
            stats.last_reset_ms = ts
            return 0.0, self._baselines[key]
        wh = (value - baseline[0]) * scale
        stats.counted_wh += wh
        return wh, self._baselines[key]

    def forget(self, equipment_id: str) -> None:
        for key in [k for k in self._baselines if k[0] == equipment_id]:
            del self._baselines[key]
        for key in [k for k in self._stats if k[0] == equipment_id]:
            del self._stats[key]

    def metrics(self, roles: dict[Key, dict[str, Any]]) -> dict[str, Any]:
        """The arbiter's decisions per meter; ``roles`` gives each meter's equipment name, type and role."""
        meters = []
        for key in sorted(set(self._stats) | set(roles)):
            if key not in roles:
                continue
            stats = self._stats.get(key)
            baseline = self._baselines.get(key)
            meters.append({
                "equipmentId": key[0], "alias": key[1], **roles[key],
                "kind": stats.kind if stats else None,
                "baseline": {"reading": baseline[0], "at": iso_utc(baseline[1])} if baseline else None,
                "readings": stats.readings if stats else 0,
                "countedWh": round(stats.counted_wh, 4) if stats else 0.0,
                "resets": stats.resets if stats else 0,
                "refused": stats.refused if stats else 0,
                "lastResetAt": iso_utc(stats.last_reset_ms) if stats else None,
                "lastReadingAt": iso_utc(stats.last_reading_ms) if stats else None,
            })  # fmt: skip
        return {
            "since": iso_utc(self._started_ms),
            "meters": meters,
            "totals": {
                "readings": sum(m["readings"] for m in meters),
                "countedWh": round(sum(m["countedWh"] for m in meters), 4),
                "resets": sum(m["resets"] for m in meters),
                "refused": sum(m["refused"] for m in meters),
            },
        }
