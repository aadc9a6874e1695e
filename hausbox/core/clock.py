"""Time for the whole engine: wall-clock time, the home's time zone, timers, local schedules.

Everything scheduled reads time through a ``Clock`` so that tests can drive it (``ManualClock``).
Timers wake at least once a minute and compare with the wall clock, so they stay right when the
clock jumps (an appliance without a battery-backed clock boots in the past until NTP answers).

Local-time rules (calendar slots, recipe windows, tariff hours) go through ``next_local_time``:
on the spring-forward day a time in the skipped hour happens once, at the first instant after the
gap; on the fall-back day a time in the repeated hour happens once, at its first occurrence.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Callable, Iterable

import gevent

log = logging.getLogger("hausbox.clock")

MAX_NAP_S = 60.0
# Our weekday numbers: 0 is Sunday ... 6 is Saturday (the interface's convention).
SUNDAY_FIRST = {6: 0, 0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}


def now_ms() -> int:
    """Wall-clock time in milliseconds since the epoch."""
    return int(time.time() * 1000)


_second_prefix: tuple[int, str] = (-1, "")


def iso_utc(ms: int | None) -> str | None:
    """``2026-02-20T14:30:00.123Z`` for a millisecond timestamp (None stays None).

    Every event carries one of these, so the formatted second is reused while it lasts.
    """
    global _second_prefix
    if ms is None:
        return None
    second, milli = divmod(int(ms), 1000)
    cached = _second_prefix
    if cached[0] != second:
        cached = _second_prefix = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{cached[1]}.{milli:03d}Z"


def parse_iso(text: str) -> int:
    """Milliseconds since the epoch for an ISO 8601 timestamp; naive times are taken as UTC."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return int(value.timestamp() * 1000)


def weekday(moment: datetime) -> int:
    """0 (Sunday) to 6 (Saturday)."""
    return SUNDAY_FIRST[moment.weekday()]


def parse_hhmm(text: str) -> tuple[int, int]:
    """``"07:30"`` -> ``(7, 30)``; ValueError for anything else."""
    hours, sep, minutes = text.partition(":")
    if not sep or len(hours) != 2 or len(minutes) != 2 or not (hours + minutes).isdigit():
        raise ValueError(f"time must be HH:MM, got {text!r}")
    h, m = int(hours), int(minutes)
    if h > 23 or m > 59:
        raise ValueError(f"time must be HH:MM, got {text!r}")
    return h, m


def local_instant(day: date, hour: int, minute: int, tz: tzinfo) -> datetime:
    """The instant a wall time happens on ``day``: the first one if repeated, just after a gap."""
    naive = datetime(day.year, day.month, day.day, hour, minute)
    first = naive.replace(tzinfo=tz, fold=0)
    # A wall time that does not exist maps to a different wall time on the round trip.
    round_trip = first.astimezone(timezone.utc).astimezone(tz)
    if round_trip.replace(tzinfo=None) != naive:
        # Skipped hour: walk from just before the gap to the first instant past the wall time.
        probe = naive.replace(tzinfo=tz, fold=1).astimezone(timezone.utc)
        while probe.astimezone(tz).replace(tzinfo=None) < naive:
            probe += timedelta(minutes=1)
        return probe.astimezone(tz)
    return first


def next_local_time(after: datetime, days: Iterable[int], hhmm: str, tz: tzinfo) -> datetime:
    """The first instant strictly after ``after`` at wall time ``hhmm`` on one of ``days`` (0=Sunday)."""
    wanted = set(days)
    if not wanted:
        raise ValueError("no days")
    hour, minute = parse_hhmm(hhmm)
    local_after = after.astimezone(tz)
    for offset in range(0, 9):
        day = (local_after + timedelta(days=offset)).date()
        if SUNDAY_FIRST[day.weekday()] not in wanted:
            continue
        instant = local_instant(day, hour, minute, tz)
        if instant.astimezone(timezone.utc) > after.astimezone(timezone.utc):
            return instant
    raise AssertionError("a weekday repeats within 8 days")


class Timer:
    """A scheduled call; ``cancel()`` it before it fires and it never will."""

    __slots__ = ("when_ms", "fn", "cancelled", "fired")

    def __init__(self, when_ms: int, fn: Callable[[], None]):
        self.when_ms = when_ms
        self.fn = fn
        self.cancelled = False
        self.fired = False

    def cancel(self) -> None:
        self.cancelled = True

    @property
    def active(self) -> bool:
        return not self.cancelled and not self.fired

    def _run(self) -> None:
        if self.cancelled or self.fired:
            return
        self.fired = True
        try:
            self.fn()
        except Exception:
            log.exception("scheduled call %s failed", getattr(self.fn, "__qualname__", self.fn))


class Clock:
    """The real clock: wall time, the home's zone, timers that survive clock jumps.

    ``skew_ms`` shifts the engine's notion of now (end-to-end tests of schedules use it to stand
    a few seconds before a slot instead of waiting for the wall clock).
    """

    def __init__(self, tz: tzinfo, skew_ms: int = 0):
        self.tz = tz
        self.skew_ms = skew_ms

    def now_ms(self) -> int:
        return now_ms() + self.skew_ms

    def local_now(self) -> datetime:
        return datetime.fromtimestamp(self.now_ms() / 1000, tz=self.tz)

    def call_at(self, when_ms: int, fn: Callable[[], None]) -> Timer:
        timer = Timer(when_ms, fn)
        gevent.spawn(self._wait, timer)
        return timer

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Timer:
        return self.call_at(self.now_ms() + int(seconds * 1000), fn)

    def _wait(self, timer: Timer) -> None:
        while not timer.cancelled:
            remaining = (timer.when_ms - self.now_ms()) / 1000
            if remaining <= 0:
                timer._run()
                return
            gevent.sleep(min(remaining, MAX_NAP_S))


class ManualClock(Clock):
    """A clock for tests: time moves only with ``advance``/``set``, firing due timers in order."""

    def __init__(self, tz: tzinfo, start_ms: int):
        super().__init__(tz)
        self._now = start_ms
        self._timers: list[tuple[int, int, Timer]] = []
        self._sequence = itertools.count()
        # Called after each timer fired: a test lets the workers run what the timer queued, so
        # that what they schedule in turn fires within the same ``set``.
        self.after_fire: Callable[[], None] | None = None

    def now_ms(self) -> int:
        return self._now

    def call_at(self, when_ms: int, fn: Callable[[], None]) -> Timer:
        timer = Timer(when_ms, fn)
        heapq.heappush(self._timers, (when_ms, next(self._sequence), timer))
        return timer

    def set(self, when_ms: int) -> None:
        """Move to ``when_ms``, firing every timer due on the way at its own time."""
        while self._timers and self._timers[0][0] <= when_ms:
            due, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, due)
            timer._run()
            if self.after_fire is not None:
                self.after_fire()
        self._now = max(self._now, when_ms)

    def advance(self, seconds: float) -> None:
        self.set(self._now + int(seconds * 1000))

    def pending(self) -> list[Timer]:
        return [t for _, _, t in sorted(self._timers) if t.active]
