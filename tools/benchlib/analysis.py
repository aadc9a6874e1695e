"""From what a WebSocket client received back to each published message: coverage, latency, loss.

The hub keeps only the latest value per device and key in each 200 ms batch, so a message may never
be seen by itself: a newer value of the same stream replaced it. A published message is *covered*
at the first moment the client holds its value or a newer one of the same stream; its end-to-end
latency is that moment minus its publish time. A message never covered (no value of its stream at
or after it ever arrived) is *lost*.
"""

from __future__ import annotations

import json
import math
from array import array
from typing import Any, Iterable

from benchlib import home
from benchlib.home import Decoder


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latency_ms(latencies: Iterable[float]) -> dict[str, Any]:
    values = sorted(latencies)
    ms = lambda v: round(v * 1000, 1) if v is not None else None  # noqa: E731
    return {
        "p50_ms": ms(percentile(values, 0.50)),
        "p99_ms": ms(percentile(values, 0.99)),
        "max_ms": ms(values[-1] if values else None),
        "samples": len(values),
    }


class EventCollector:
    """``on_frame`` for a ``ws.Listener``: decodes device.data.updated values into ``(seq, time)``."""

    def __init__(self, decoder: Decoder, keep_frames: bool = False):
        self.decoder = decoder
        self.seqs = array("q")
        self.times = array("d")
        self.counts: dict[str, int] = {}
        self.last_device_event = 0.0
        self.keep_frames = keep_frames
        self.frames: list[tuple[int, int, list[int]]] = []  # (crc, length, seqs) when keep_frames

    def on_frame(self, _index: int, t: float, payload: bytes) -> None:
        try:
            events = json.loads(payload)
        except ValueError:
            self.counts["unparsable"] = self.counts.get("unparsable", 0) + 1
            return
        if not isinstance(events, list):
            events = [events]
        decode, seqs, times, counts = self.decoder.decode, self.seqs, self.times, self.counts
        in_frame: list[int] = []
        for event in events:
            kind = event.get("type") if isinstance(event, dict) else None
            counts[kind] = counts.get(kind, 0) + 1
            if kind == "device.data.updated":
                self.last_device_event = t
                seq = decode(event.get("deviceId"), event.get("key"), event.get("value"))
                if seq is not None:
                    seqs.append(seq)
                    times.append(t)
                    in_frame.append(seq)
        if self.keep_frames:
            import zlib

            self.frames.append((zlib.crc32(payload), len(payload), in_frame))


def first_receipts(seqs: Iterable[int], marks: Iterable[float], first: int, count: int) -> dict[int, float]:
    """``seq -> mark`` (a time, or a frame index) of each seq's first receipt, for seqs in range."""
    out: dict[int, float] = {}
    end = first + count
    for seq, mark in zip(seqs, marks):
        if first <= seq < end and seq not in out:
            out[seq] = mark
    return out


def coverage(first: int, count: int, received: dict[int, float], n_devices: int = home.N_DEVICES) -> list[float | None]:
    """For each published seq, the smallest mark among the receipts of it or a later value of its
    stream (None: lost)."""
    covered: list[float | None] = [None] * count
    nearest: dict[int, float] = {}
    stream_of = home.stream_of_seq
    for i in range(count - 1, -1, -1):
        seq = first + i
        stream = stream_of(seq, n_devices)
        mark = received.get(seq)
        if mark is not None:
            current = nearest.get(stream)
            if current is None or mark < current:
                nearest[stream] = mark
        covered[i] = nearest.get(stream)
    return covered


def load_times(path: str) -> array:
    times = array("d")
    with open(path, "rb") as f:
        times.frombytes(f.read())
    return times


def step_report(run: dict[str, Any], pub_times: array, collector: EventCollector, n_devices: int = home.N_DEVICES) -> dict[str, Any]:
    """Coverage, latency and loss of one load run seen by one client."""
    first, count = run["first_seq"], run["count"]
    received = first_receipts(collector.seqs, collector.times, first, count)
    covered = coverage(first, count, received, n_devices)
    latencies = [c - p for c, p in zip(covered, pub_times) if c is not None]
    lost = sum(1 for c in covered if c is None)
    # Handled: the rate at which the client's view advanced. The slope of coverage time against
    # publish time is 1 when the service keeps pace (latency steady) and grows when it falls
    # behind; the offered rate divided by that slope (and scaled by what was not lost) is the
    # service's output rate. Least squares smooth out the 200 ms batch steps.
    pairs = [(p, c) for c, p in zip(covered, pub_times) if c is not None]
    handled = None
    if len(pairs) > 2:
        n = len(pairs)
        mp = sum(p for p, _ in pairs) / n
        mc = sum(c for _, c in pairs) / n
        var = sum((p - mp) ** 2 for p, _ in pairs)
        slope = sum((p - mp) * (c - mc) for p, c in pairs) / var if var else None
        span = pub_times[-1] - pub_times[0]
        if slope and slope > 0 and span > 0:
            handled = (count - 1) / span / slope * (count - lost) / count
    direct = [received[first + i] - pub_times[i] for i in range(count) if (first + i) in received]
    return {
        "published": count,
        "received_direct": len(received),
        "superseded_in_batch": count - lost - len(received),
        "lost": lost,
        "handled_per_s": round(handled, 1) if handled else None,
        "latency": latency_ms(latencies),
        "latency_of_values_received_as_such": latency_ms(direct),
    }
