"""Downsampling and retention: jobs of the history worker, every hour and at start (catch-up).

Each job keeps a watermark in the store (``jobs.done_until``): the hourly tier is made up to the
last local hour that ended more than ``GRACE_MS`` ago, the daily tier up to the last local day
whose hours are all made. A run works in chunks of a few hours, each one transaction that writes
the aggregates and moves the watermark together, and yields between chunks so a long catch-up
after downtime never holds the core; a restart in the middle redoes at most one chunk.
A point that arrives late (a ``sourceTimestamp`` in an hour already made) moves the watermark back
in the commit that writes it, and the next run makes that hour again.
Retention deletes, per tier, what is older than ``TIERS`` says; raw points only once downsampled.
"""

from __future__ import annotations

import logging
from typing import Any

import gevent

from hausbox.core.clock import Clock, iso_utc
from hausbox.core.workers import Worker
from hausbox.history import buckets
from hausbox.history.store import TIERS, HistoryStore

log = logging.getLogger("hausbox.history")

HOURLY, DAILY = "downsample-hourly", "downsample-daily"
GRACE_MS = 120_000  # after an hour ends: its points are committed (commit interval up to 300 s: late ones redo it)
CHUNK_HOURS = 6
CHUNK_DAYS = 31
RUN_OFFSET_MS = 180_000  # runs at hh:03, past the grace


class TierJobs:
    def __init__(self, store: HistoryStore, worker: Worker, clock: Clock):
        self._store = store
        self._worker = worker
        self._clock = clock
        self._timer: Any = None
        self.runs = 0

    def start(self) -> None:
        self._worker.submit(self.run)  # catch up on what downtime left
        self._schedule()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        now = self._clock.now_ms()
        next_run = buckets.hour_start(now, self._clock.tz) + buckets.HOUR_MS + RUN_OFFSET_MS
        self._timer = self._clock.call_at(next_run, self._tick)

    def _tick(self) -> None:
        self._worker.submit(self.run)
        self._schedule()

    def run(self) -> None:
        """Downsample, then expire; a failure is recorded on the job and retried at the next run."""
        self.runs += 1
        try:
            self._store.flush()  # the hours to make must be in SQLite
        except Exception as error:  # noqa: BLE001 -- the writer reports a store that refuses writes
            log.error("history: flush before the jobs failed: %s", error)
            return
        for name, step in ((HOURLY, self._hourly), (DAILY, self._daily), ("retention", self._retention)):
            try:
                step()
            except Exception as error:  # noqa: BLE001 -- a failed job must not stop the writer
                log.error("history: %s failed: %s", name, error)
                if name != "retention":
                    self._store.job_failed(name, self._clock.now_ms(), str(error))

    def _hourly(self) -> None:
        now, tz = self._clock.now_ms(), self._clock.tz
        target = buckets.hour_start(now - GRACE_MS, tz)
        done = self._store.job(HOURLY, buckets.hour_start(now - TIERS["raw"], tz))[0]
        while done < target:
            end = min(done + CHUNK_HOURS * buckets.HOUR_MS, target)
            self._store.downsample_hours(done, end, buckets.sub_hour_offset(done, tz), self._clock.now_ms())
            done = end
            gevent.sleep(0)

    def _daily(self) -> None:
        now, tz = self._clock.now_ms(), self._clock.tz
        hourly_done = self._store.job(HOURLY, buckets.hour_start(now - TIERS["raw"], tz))[0]
        target = buckets.day_start(hourly_done, tz)  # only days whose every hour is made
        done = buckets.day_start(self._store.job(DAILY, buckets.day_start(now - TIERS["raw"], tz))[0], tz)
        while done < target:
            days = []
            while done < target and len(days) < CHUNK_DAYS:
                after = buckets.next_day(done, tz)
                days.append((done, after))
                done = after
            self._store.downsample_days(days, self._clock.now_ms())
            gevent.sleep(0)

    def _retention(self) -> None:
        now = self._clock.now_ms()
        hourly_done = self._store.job(HOURLY, buckets.hour_start(now - TIERS["raw"], self._clock.tz))[0]
        for tier, keep_ms in TIERS.items():
            before = now - keep_ms
            if tier == "raw":
                before = min(before, hourly_done)  # never a raw point the hourly tier has not taken
            self._store.expire(tier, before, now)
            gevent.sleep(0)

    def status(self) -> dict[str, Any]:
        """``GET /history/retention``: the tiers with their retention and the jobs' last runs."""
        now = self._clock.now_ms()
        tiers = {name: {"name": name, "retentionSeconds": keep // 1000} for name, keep in TIERS.items()}
        jobs = {}
        for name in (HOURLY, DAILY, *(f"retention-{tier}" for tier in TIERS)):
            done, last_run, last_status, last_error = self._store.job(name, now) if self._known(name) else (None, None, None, None)
            jobs[name] = {"id": name, "status": last_status or "pending", "lastRunAt": iso_utc(last_run), "doneUntil": iso_utc(done), "lastError": last_error}
        return {
            "buckets": {"raw": tiers["raw"], "hourly": tiers["hourly"], "daily": tiers["daily"], "energyHourly": tiers["energy_hourly"], "energyDaily": tiers["energy_daily"]},
            "tasks": {"hourly": jobs[HOURLY], "daily": jobs[DAILY], **{name: job for name, job in jobs.items() if name.startswith("retention-")}},
            "setupComplete": True,
        }

    def _known(self, name: str) -> bool:
        return name in self._store.job_names()
