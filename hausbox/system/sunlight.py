"""Sunrise, sunset and daylight at the home (astral), for the root zone and for automations.

``sunrise`` and ``sunset`` are local ``"HH:MM"`` strings for today; ``isDaylight`` is
``sunrise + home.sunriseOffset <= now < sunset - home.sunsetOffset`` (offsets in minutes, default
30 and 45). Without valid coordinates all three are null.

Nothing polls: the service computes the state, then sets one timer at the next instant it can
change (the daylight start, the daylight end, or local midnight, when the day's times change), and
recomputes when a ``home.*`` setting changes. Every change emits ``sunlight.changed``.

High latitudes: on a day without a sunrise (or a sunset) that value is null. Daylight then starts
at midnight (no sunrise) or lasts until midnight (no sunset); on a day with neither, it is the sun's
height at noon that decides (midnight sun: daylight all day; polar night: none).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from astral import Observer
from astral.sun import elevation, noon, sunrise, sunset

from hausbox.core.bus import Event, EventBus
from hausbox.core.clock import Clock, Timer, local_instant
from hausbox.core.settings import SettingsStore
from hausbox.system.location import (
    SUNRISE_OFFSET,
    SUNSET_OFFSET,
    home_location,
    offset_minutes,
)

log = logging.getLogger("hausbox.sunlight")

DEFAULT_SUNRISE_OFFSET_MIN = 30.0
DEFAULT_SUNSET_OFFSET_MIN = 45.0
_MS_PER_MIN = 60_000


@dataclass(frozen=True)
class SunDay:
    """One local day at the home: instants in ms since the epoch (None where the sun does not cross)."""

    day: date
    sunrise_ms: int | None
    sunset_ms: int | None
    sun_up_at_noon: bool
    start_ms: int  # local midnight opening the day
    end_ms: int  # local midnight closing it


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def sun_day(latitude: float, longitude: float, day: date, tz: Any) -> SunDay:
    observer = Observer(latitude=latitude, longitude=longitude)
    try:
        rise: int | None = _ms(sunrise(observer, day, tzinfo=tz))
    except ValueError:
        rise = None
    try:
        fall: int | None = _ms(sunset(observer, day, tzinfo=tz))
    except ValueError:
        fall = None
    up = rise is not None or fall is not None or elevation(observer, noon(observer, day)) > 0
    start = _ms(local_instant(day, 0, 0, tz))
    end = _ms(local_instant(day + timedelta(days=1), 0, 0, tz))
    return SunDay(day, rise, fall, up, start, end)


class Sunlight:
    def __init__(self, bus: EventBus, settings: SettingsStore, clock: Clock):
        self._bus = bus
        self._settings = settings
        self._clock = clock
        self._state: dict[str, Any] = {"sunrise": None, "sunset": None, "isDaylight": None}
        self._timer: Timer | None = None
        self._running = False
        bus.on("settings.changed", self._on_settings)
        self._state = self._compute()[0]

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._running = True
        self.refresh()

    def stop(self) -> None:
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # ---- reads -------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """``{sunrise, sunset, isDaylight}`` as the root zone shows them."""
        return dict(self._state)

    def sunrise_ms(self, day: date) -> int | None:
        """When the sun rises at the home on local ``day`` (ms); None without a location or a sunrise."""
        location = home_location(self._settings)
        if location is None:
            return None
        return sun_day(location[0], location[1], day, self._clock.tz).sunrise_ms

    # ---- computation -------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute now; emit ``sunlight.changed`` if anything moved; set the next wake-up."""
        state, next_ms = self._compute()
        changed = state != self._state
        self._state = state
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._running and next_ms is not None:
            self._timer = self._clock.call_at(next_ms, self.refresh)
        if changed:
            log.debug("sunlight: %s", state)
            self._bus.emit("sunlight.changed")

    def _compute(self) -> tuple[dict[str, Any], int | None]:
        """The state now and the next instant (ms) at which it may change (None: never)."""
        location = home_location(self._settings)
        if location is None:
            return {"sunrise": None, "sunset": None, "isDaylight": None}, None
        tz = self._clock.tz
        now = self._clock.now_ms()
        today = datetime.fromtimestamp(now / 1000, tz=timezone.utc).astimezone(tz).date()
        sun = sun_day(location[0], location[1], today, tz)
        after = int(offset_minutes(self._settings, SUNRISE_OFFSET, DEFAULT_SUNRISE_OFFSET_MIN) * _MS_PER_MIN)
        before = int(offset_minutes(self._settings, SUNSET_OFFSET, DEFAULT_SUNSET_OFFSET_MIN) * _MS_PER_MIN)
        if sun.sunrise_ms is None and sun.sunset_ms is None:
            light_from, light_until = (sun.start_ms, sun.end_ms) if sun.sun_up_at_noon else (sun.end_ms, sun.end_ms)
        else:
            light_from = sun.start_ms if sun.sunrise_ms is None else sun.sunrise_ms + after
            light_until = sun.end_ms if sun.sunset_ms is None else sun.sunset_ms - before
        state = {
            "sunrise": self._hhmm(sun.sunrise_ms),
            "sunset": self._hhmm(sun.sunset_ms),
            "isDaylight": light_from <= now < light_until,
        }
        upcoming = [t for t in (light_from, light_until, sun.end_ms) if t > now]
        return state, min(upcoming) if upcoming else None

    def _hhmm(self, ms: int | None) -> str | None:
        if ms is None:
            return None
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone(self._clock.tz).strftime("%H:%M")

    def _on_settings(self, event: Event) -> None:
        if any(key.startswith("home.") for key in event.get("keys", ())):
            self.refresh()
