"""A batch: what one commit of the history writer holds, and its form in the journal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, str]  # equipment id, alias
Point = tuple[str, str, int, float]  # equipment id, alias, ts (ms), value
TextPoint = tuple[str, str, int, str]
Aggregate = tuple[int, float, float, float, float, int]  # ts, min, max, mean, sum, count
Baseline = tuple[float, int, str | None]  # a meter's reading, its ts, the device datum it came from


@dataclass
class Batch:
    """What one commit writes: raw points, energy Wh per bucket, meter baselines, late-point marks."""

    points: list[Point] = field(default_factory=list)
    texts: list[TextPoint] = field(default_factory=list)
    energy_hourly: dict[tuple[Key, int], list[float]] = field(default_factory=dict)  # (key, hour) -> [hp, hc]
    energy_daily: dict[tuple[Key, int], list[float]] = field(default_factory=dict)
    meters: dict[Key, Baseline] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.points) + len(self.texts)

    def empty(self) -> bool:
        return not (self.points or self.texts or self.energy_hourly or self.meters)

    def add_energy(self, key: Key, hour: int, day: int, hp: float, hc: float) -> None:
        for table, bucket in ((self.energy_hourly, hour), (self.energy_daily, day)):
            sums = table.setdefault((key, bucket), [0.0, 0.0])
            sums[0] += hp
            sums[1] += hc

    def merge(self, other: "Batch", older: bool = False) -> None:
        """Add ``other``'s content: after this batch's, or before it when ``older`` (a failed commit)."""
        if older:
            self.points[:0] = other.points
            self.texts[:0] = other.texts
        else:
            self.points.extend(other.points)
            self.texts.extend(other.texts)
        for mine, theirs in ((self.energy_hourly, other.energy_hourly), (self.energy_daily, other.energy_daily)):
            for bucket, (hp, hc) in theirs.items():
                sums = mine.setdefault(bucket, [0.0, 0.0])
                sums[0] += hp
                sums[1] += hc
        for key, baseline in other.meters.items():
            if older:
                self.meters.setdefault(key, baseline)
            else:
                self.meters[key] = baseline

    def document(self, late_from: dict[str, int] | None) -> dict[str, Any]:
        """The batch as the journal keeps it: keys listed once, then referred to by index."""
        index: dict[Key, int] = {}

        def ref(key: Key) -> int:
            return index.setdefault(key, len(index))

        base = min((p[2] for p in self.points + self.texts), default=0)  # times as offsets: short numbers
        body = {
            "b": base,
            "p": [[ref((e, a)), ts - base, v] for e, a, ts, v in self.points],
            "t": [[ref((e, a)), ts - base, v] for e, a, ts, v in self.texts],
            "eh": [[ref(key), bucket, hp, hc] for (key, bucket), (hp, hc) in self.energy_hourly.items()],
            "ed": [[ref(key), bucket, hp, hc] for (key, bucket), (hp, hc) in self.energy_daily.items()],
            "m": [[ref(key), *baseline] for key, baseline in self.meters.items()],
            "l": late_from or {},
        }
        body["k"] = list(index)
        return body

    @classmethod
    def from_document(cls, body: dict[str, Any]) -> "Batch":
        keys = [tuple(key) for key in body["k"]]
        base = body["b"]
        return cls(
            points=[(*keys[k], base + ts, v) for k, ts, v in body["p"]],
            texts=[(*keys[k], base + ts, v) for k, ts, v in body["t"]],
            energy_hourly={(keys[k], bucket): [hp, hc] for k, bucket, hp, hc in body["eh"]},
            energy_daily={(keys[k], bucket): [hp, hc] for k, bucket, hp, hc in body["ed"]},
            meters={keys[k]: (reading, ts, source[0] if source else None) for k, reading, ts, *source in body["m"]},  # older journals: no source
        )  # type: ignore[arg-type]
