"""Bytes a service writes at a steady 10 messages/s, watched for as long as the bench runs.

The service keeps current values in memory and writes them back in batches, minutes apart, so a
short window says little: a dedicated service (its own data directory and base topic) takes 10
messages/s from the start of the run to its end while ``/proc/<pid>/io`` is sampled every 2 s.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from benchlib.procs import cpu_seconds, io_counters, log
from benchlib.setup import Instance

SAMPLE_S = 2.0
WHOLE_WINDOW_S = 1800.0  # a window this long holds the history flush (30 min) and the device snapshot (15 min)
RATE = 10


class DiskWatch:
    def __init__(self, instance: Instance, observe_s: float):
        self.instance = instance
        self.observe_s = observe_s
        self.samples: list[tuple[float, int]] = []  # (seconds since t0, write_bytes since t0)
        self.io0: dict[str, int] = {}
        self.t0 = 0.0
        self.cpu0: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # A watch of an hour lost its load generator twice, unexplained (no traceback: a signal):
        # when it dies the window ends there, and the samples are kept on disk as they come.
        self.loadgen_died: tuple[float, int] | None = None  # (seconds since t0, exit code)
        self.samples_path = instance.loadgen.log_path.parent / "disk-samples.tsv"

    def start(self) -> None:
        self.instance.loadgen.send({"cmd": "run", "rate": RATE, "duration": self.observe_s + 600, "tag": "disk", "stoppable": True})
        time.sleep(2.0)
        pid = self.instance.service.pid
        self.t0 = time.monotonic()
        self.io0 = io_counters(pid)  # type: ignore[arg-type]
        self.cpu0 = cpu_seconds(pid)  # type: ignore[arg-type]
        self.samples = [(0.0, 0)]

        loadgen = self.instance.loadgen.process

        def sample() -> None:
            with open(self.samples_path, "a") as kept:
                while not self._stop.wait(SAMPLE_S):
                    io = io_counters(pid)  # type: ignore[arg-type]
                    t = time.monotonic() - self.t0
                    if io:
                        self.samples.append((t, io["write_bytes"] - self.io0.get("write_bytes", 0)))
                        kept.write(f"{t:.1f}\t{self.samples[-1][1]}\n")
                        kept.flush()
                    if loadgen.poll() is not None:
                        self.loadgen_died = (t, loadgen.returncode)
                        log(f"disk: the load generator died {t:.0f} s into the watch (exit code {loadgen.returncode}): the window ends there")
                        return

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()

    def since_spawn(self) -> float:
        return time.monotonic() - self.instance.service.spawned_at

    def finish(self) -> dict[str, Any]:
        service = self.instance.service
        pid = service.pid
        io1 = io_counters(pid)  # type: ignore[arg-type]
        cpu1 = cpu_seconds(pid)  # type: ignore[arg-type]
        window_s = time.monotonic() - self.t0
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        if self.loadgen_died is not None:  # the service had no load after this: measure up to it
            window_s = self.loadgen_died[0]
            io1 = {"write_bytes": self.io0.get("write_bytes", 0) + self.samples[-1][1]}
        try:
            self.instance.loadgen.send({"cmd": "stop"})
            run = self.instance.loadgen.receive(30)
        except (OSError, RuntimeError, TimeoutError) as error:  # the load generator is gone: keep the figures
            log(f"disk: the load generator did not answer at the end ({error!r}); message count unknown")
            run = {}
        if run.get("times_file"):
            Path(run["times_file"]).unlink(missing_ok=True)
        stop = service.stop()
        window = io1.get("write_bytes", 0) - self.io0.get("write_bytes", 0)
        self.samples.append((window_s, window))
        at_stop = stop["write_bytes_total"] - io1.get("write_bytes", 0)
        bursts = find_bursts(self.samples)
        spawn_offset = self.t0 - service.spawned_at  # window start, in seconds after the process started
        out: dict[str, Any] = {
            "rate_per_s": RATE,
            "messages": run.get("count"),
            "window_s": round(window_s, 1),
            "loadgen_died": {"at_s": round(self.loadgen_died[0], 1), "exit_code": self.loadgen_died[1]} if self.loadgen_died else None,
            "window_starts_s_after_spawn": round(spawn_offset, 1),
            "window_write_bytes": window,
            "write_backs_seen": [{"at_s_after_spawn": round(t + spawn_offset, 1), "bytes": b} for t, b in bursts],
            "write_back_at_stop_bytes": at_stop,
            "service_cpu_percent": round(100 * (cpu1 - self.cpu0) / window_s, 2) if cpu1 is not None and self.cpu0 is not None else None,
            "stop": {k: stop[k] for k in ("stop_s", "exit_code", "killed")},
            "io_counters_window": {k: io1.get(k, 0) - self.io0.get(k, 0) for k in ("wchar", "syscw", "write_bytes", "cancelled_write_bytes")},
        }
        if window_s >= WHOLE_WINDOW_S:
            # Long enough to hold every periodic writer (device snapshot 15 min, history flush 30
            # min, tier jobs hourly at hh:03): the plain average. Pairing two bursts is not: a flush
            # and an hourly job 158 s apart once made 4.7 MB/h of a 1.5 MB/h run.
            per_hour = window * 3600 / window_s
            how = f"average over the whole window ({window_s:.0f} s: every periodic write-back at least once)"
        elif len(bursts) >= 2:
            # Whole periods: from the end of the first write-back to the end of the last one.
            (t_first, _), (t_last, _) = bursts[0], bursts[-1]
            written = value_at(self.samples, t_last) - value_at(self.samples, t_first)
            per_hour = written * 3600 / (t_last - t_first)
            how = "whole periods between the first and the last write-back seen"
        elif len(bursts) == 1:
            t_burst, burst = bursts[0]
            period = t_burst + spawn_offset  # the write-back timer runs from the process start
            steady = (window - burst) / window_s
            per_hour = steady * 3600 + burst * 3600 / period
            how = (f"writes outside write-backs ({steady:.0f} B/s) x 3600, plus the one write-back seen ({burst} B) once per "
                   f"{period:.0f} s (its time after the process started)")  # fmt: skip
        else:
            per_hour = (window + at_stop) * 3600 / window_s
            how = (f"no periodic write-back within {window_s:.0f} s: upper bound counting the write-back done at stop once per "
                   f"window ((window + write-back at stop) x 3600 / window)")  # fmt: skip
        out.update({"upper_bound": not bursts, "bytes_per_hour": round(per_hour), "mb_per_hour": round(per_hour / 1e6, 3), "estimate": how, "samples": [[round(t, 1), b] for t, b in self.samples]})
        log(f"disk: {out['mb_per_hour']} MB/h at {RATE}/s ({how})")
        return out


def find_bursts(samples: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """Write-backs: runs of sample intervals that wrote far more than the median interval."""
    deltas = [(samples[i][0], samples[i][1] - samples[i - 1][1]) for i in range(1, len(samples))]
    if not deltas:
        return []
    ordered = sorted(d for _t, d in deltas)
    threshold = max(64 * 1024, 20 * ordered[len(ordered) // 2])
    bursts: list[tuple[float, int]] = []
    in_burst = False
    for t, d in deltas:
        if d > threshold:
            if in_burst:
                bursts[-1] = (t, bursts[-1][1] + d)
            else:
                bursts.append((t, d))
            in_burst = True
        else:
            in_burst = False
    return bursts


def value_at(samples: list[tuple[float, int]], t: float) -> int:
    return next((b for ts, b in samples if ts >= t), samples[-1][1])
