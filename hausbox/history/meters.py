"""The baseline arbiter: energy readings in, Wh consumed out, never negative, never counted twice.

Meters report in two ways. zigbee2mqtt's ``energy`` (unit ``kWh``, or no unit) is a cumulative
counter: what was consumed is the difference from the previous reading, the meter's *baseline*. A
meter that reports ``Wh`` gives the energy of its last interval: each reading is consumed as is.
The arbiter decides, for each reading, what it counts:

- the first reading of a counter sets its baseline and counts nothing (there is no interval yet);
- a reading below the baseline is a *drop*: it counts nothing, and the next reading tells what it
  was. Back at or above the old baseline: a transient drop (plugs that rejoin the network report
  0 once, then their index again), counted from the old baseline as if the drop never came, not
  as a whole index consumed in one interval. Above the drop but below the old baseline: the meter
  was reset or replaced, and what it counted since the drop is consumed. At or below the drop:
  nothing is told yet (a new meter that has not turned);
- a negative or non-numeric interval reading counts nothing and is refused;
- a reading from another device datum than the baseline's (the equipment's meter was swapped:
  its binding removed and made again on the new device) is a *replacement*: the new meter's
  first reading, a new baseline, nothing counted. Its index has nothing to do with the old one's,
  higher or lower. A baseline kept before sources were recorded (``None``) takes the first one
  it sees.

Baselines are written with the sums in the same transaction, so a restart, even kill -9, continues
from the last committed reading: what was consumed meanwhile is counted by the next reading. The
baseline written during a drop is the old one, so a restart then loses at most the first interval
of a real reset, never counts a transient drop's index whole.
``metrics()`` is ``GET /energy/arbiter/metrics``: what the arbiter decided since the process started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from hausbox.core.clock import iso_utc
from hausbox.history.batch import Baseline, Key

Kind = Literal["cumulative", "interval"]
WH_PER = {"kWh": 1000.0, "Wh": 1.0, "MWh": 1_000_000.0}
# The counts of ``metrics()``, per meter and in total: their name there -> MeterStats field.
COUNTS = {"readings": "readings", "resets": "resets", "transientDrops": "transient_drops", "replacements": "replacements", "refused": "refused"}


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
    transient_drops: int = 0
    replacements: int = 0
    refused: int = 0
    last_reset_ms: int | None = None
    last_reading_ms: int | None = None


class MeterArbiter:
    def __init__(self, baselines: dict[Key, Baseline], started_ms: int):
        self._baselines = dict(baselines)
        self._drops: dict[Key, tuple[float, int]] = {}  # key -> the reading below the baseline, not yet told
        self._stats: dict[Key, MeterStats] = {}
        self._started_ms = started_ms

    def consumed(self, key: Key, value: Any, unit: str | None, ts: int, source: str) -> tuple[float, Baseline | None]:
        """``(wh, new_baseline)``: the Wh this reading adds (>= 0) and, for a counter, its new baseline.
        ``source``: the device datum the reading came from."""
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
        if baseline is not None and baseline[2] not in (None, source):
            self._drops.pop(key, None)
            stats.replacements += 1
            baseline = None
        if baseline is None:
            self._baselines[key] = (float(value), ts, source)
            return 0.0, self._baselines[key]
        drop = self._drops.get(key)
        if value < baseline[0]:
            if drop is None or value < drop[0]:
                self._drops[key] = drop = (float(value), ts)  # the baseline stays until a reading tells
            if value <= drop[0]:
                return 0.0, None
            del self._drops[key]  # above the drop, below the old index: reset or replaced, counted since the drop
            stats.resets += 1
            stats.last_reset_ms = drop[1]
            start = drop[0]
        else:
            if self._drops.pop(key, None) is not None:
                stats.transient_drops += 1  # back at the old index: the drop never was
            start = baseline[0]
        self._baselines[key] = (float(value), ts, source)
        wh = (value - start) * scale
        stats.counted_wh += wh
        return wh, self._baselines[key]

    def forget(self, equipment_id: str) -> None:
        for by_key in (self._baselines, self._drops, self._stats):
            for key in [k for k in by_key if k[0] == equipment_id]:
                del by_key[key]

    def metrics(self, roles: dict[Key, dict[str, Any]]) -> dict[str, Any]:
        """The arbiter's decisions per meter; ``roles`` gives each meter's equipment name, type and role."""
        meters = []
        for key in sorted(roles):
            stats = self._stats.get(key)
            baseline = self._baselines.get(key)
            meters.append({
                "equipmentId": key[0], "alias": key[1], **roles[key],
                "kind": stats.kind if stats else None,
                "baseline": {"reading": baseline[0], "at": iso_utc(baseline[1]), "deviceDataId": baseline[2]} if baseline else None,
                "countedWh": round(stats.counted_wh, 4) if stats else 0.0,
                **{name: getattr(stats, field) if stats else 0 for name, field in COUNTS.items()},
                "lastResetAt": iso_utc(stats.last_reset_ms) if stats else None,
                "lastReadingAt": iso_utc(stats.last_reading_ms) if stats else None,
            })  # fmt: skip
        totals = {name: sum(m[name] for m in meters) for name in COUNTS}
        return {
            "since": iso_utc(self._started_ms),
            "meters": meters,
            "totals": {**totals, "countedWh": round(sum(m["countedWh"] for m in meters), 4)},
        }
