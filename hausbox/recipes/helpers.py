"""Helpers recipes share: durations, local time windows, and light control through the context."""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Iterable

from hausbox.core.clock import iso_utc, next_local_time, parse_hhmm, parse_iso

if TYPE_CHECKING:
    from hausbox.equipments.equipment import Equipment
    from hausbox.recipes.protocols import RecipeContext, ValidationContext

_DURATION = re.compile(r"^(\d+)\s*(s|m|h)$")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000}
ALL_DAYS = range(7)
LIGHT_TYPES = ("light_onoff", "light_dimmable", "light_color")


def parse_duration(value: Any) -> int:
    """``"10m"``, ``"30s"``, ``"1h"`` (spaces allowed before the unit) or a number of ms -> ms."""
    if isinstance(value, bool):
        raise ValueError("must be a duration like 10m")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise ValueError("must be a duration like 10m")
        return int(value)
    if isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match:
            return int(match.group(1)) * _UNIT_MS[match.group(2)]
    raise ValueError("must be a duration like 10m")


def format_duration(ms: float) -> str:
    """At least an hour: ``"2h"``; at least a minute: ``"10min"``; else ``"30s"`` (rounded)."""
    if ms >= 3_600_000:
        return f"{round(ms / 3_600_000)}h"
    if ms >= 60_000:
        return f"{round(ms / 60_000)}min"
    return f"{round(ms / 1000)}s"


def as_text(value: Any) -> str:
    """A value as text, the way the interface compares values "by string" (``true``, ``21``, ``21.5``)."""
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def minutes_of(hhmm: str) -> int:
    hour, minute = parse_hhmm(hhmm)
    return hour * 60 + minute


def in_window(moment: datetime, start: str, end: str) -> bool:
    """Whether local ``moment`` lies in [start, end); a window whose end is earlier crosses midnight."""
    now = moment.hour * 60 + moment.minute
    first, last = minutes_of(start), minutes_of(end)
    if first == last:
        return False
    if first < last:
        return first <= now < last
    return now >= first or now < last


def next_boundary(after: datetime, hhmm: str) -> datetime:
    """The next instant (any day) strictly after ``after`` at local wall time ``hhmm``."""
    return next_local_time(after, ALL_DAYS, hhmm, after.tzinfo)  # type: ignore[arg-type]


def _on(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "on")


def _off(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() == "off")


def normalise(value: Any) -> Any:
    """A value in a form where an order and the device's report of it compare equal."""
    if value is True or value is False:
        return "on" if value else "off"
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, (int, float)):
        return float(value)
    return value


class Helpers:
    """``ctx.helpers``: pure helpers plus light control through the context's order path."""

    parse_duration = staticmethod(parse_duration)
    format_duration = staticmethod(format_duration)
    in_window = staticmethod(in_window)
    next_boundary = staticmethod(next_boundary)
    minutes_of = staticmethod(minutes_of)  # "07:30" -> 450; ValueError for anything but HH:MM

    def __init__(self, ctx: "ValidationContext"):
        self._ctx = ctx

    # ---- reading -------------------------------------------------------------------------------
    def state_alias(self, equipment: "Equipment") -> str | None:
        """The alias holding an equipment's on/off state: ``state``, else a light_state binding."""
        if "state" in equipment.data_bindings:
            return "state"
        for alias in equipment.data_bindings:
            datum = self._ctx.equipments.datum_of(equipment, alias)
            if datum is not None and datum.category == "light_state":
                return alias
        return None

    def is_light_on(self, equipment_id: str) -> bool:
        equipment = self._ctx.equipments.get(equipment_id)
        if equipment is None:
            return False
        alias = self.state_alias(equipment)
        return alias is not None and _on(equipment.data.get(alias))

    def is_light_off(self, equipment_id: str) -> bool:
        """Known to be off (an unknown state is neither on nor off)."""
        equipment = self._ctx.equipments.get(equipment_id)
        if equipment is None:
            return False
        alias = self.state_alias(equipment)
        return alias is not None and _off(equipment.data.get(alias))

    def sunrise(self, day: date) -> datetime | None:
        """When the sun rises at the home on local ``day`` (local time); None without the home's
        location (settings ``home.latitude``/``home.longitude``) or on a day the sun does not rise."""
        sunlight = self._ctx.sunlight
        at = sunlight.sunrise_ms(day) if sunlight is not None else None
        return None if at is None else datetime.fromtimestamp(at / 1000, tz=self._ctx.clock.tz)

    def is_any_light_on(self, equipment_ids: Iterable[str]) -> bool:
        return any(self.is_light_on(i) for i in equipment_ids)

    def order_alias(self, equipment_id: str, alias: str, category: str | None = None) -> str | None:
        """``alias`` when the equipment has that order, else the first order of ``category``."""
        equipment = self._ctx.equipments.get(equipment_id)
        if equipment is None:
            return None
        if alias in equipment.order_bindings:
            return alias
        if category is not None:
            for name, binding in equipment.order_bindings.items():
                if self._ctx.equipments.order_category(equipment, binding) == category:
                    return name
        return None

    def switch_value(self, equipment_id: str, on: bool) -> Any:
        """What to send on the ``state`` order for on/off: its enum value, a boolean, or ON/OFF."""
        equipment = self._ctx.equipments.get(equipment_id)
        order = self._ctx.equipments.order_of(equipment, "state") if equipment is not None else None
        wanted = "on" if on else "off"
        if order is not None:
            if order.type == "boolean":
                return on
            for allowed in order.enum_values or ():
                if isinstance(allowed, str) and allowed.lower() == wanted:
                    return allowed
        return "ON" if on else "OFF"

    # ---- acting (run time only) ------------------------------------------------------------------
    def _run_ctx(self) -> "RecipeContext":
        return self._ctx  # type: ignore[return-value]

    def deadline(self, key: str, fn: Any) -> "Deadline":
        """A timer persisted in ``state[key]`` (see :class:`Deadline`)."""
        return Deadline(self._run_ctx(), key, fn)

    def ordered_lights(self, equipment_ids: Iterable[str], key: str = "lightsOrderedOn") -> "OrderedLights":
        """Lights on as reported or as this recipe ordered them (see :class:`OrderedLights`)."""
        return OrderedLights(self._run_ctx(), equipment_ids, key)

    def presence(self, zone_id: str, timeout_ms: int, on_change: Any) -> "Presence":
        """Presence in a zone: motion, held ``timeout_ms`` after it ends (see :class:`Presence`)."""
        return Presence(self._run_ctx(), zone_id, timeout_ms, on_change)

    def switch_one(self, equipment_id: str, on: bool) -> bool:
        """Send on or off to the equipment's ``state`` order; whether it was sent."""
        return self._run_ctx().execute_order(equipment_id, "state", self.switch_value(equipment_id, on))

    def switch(self, equipment_ids: Iterable[str], on: bool) -> int:
        """Send on or off to every equipment's ``state`` order; returns how many were sent."""
        return sum(self.switch_one(i, on) for i in equipment_ids)

    def turn_on_lights(self, equipment_ids: Iterable[str]) -> int:
        return self.switch(equipment_ids, True)

    def turn_off_lights(self, equipment_ids: Iterable[str]) -> int:
        return self.switch(equipment_ids, False)

    def set_lights_brightness(self, equipment_ids: Iterable[str], brightness: float) -> int:
        """Send ``brightness`` to the lights that have a brightness order (the others are skipped)."""
        ctx = self._run_ctx()
        sent = 0
        for equipment_id in equipment_ids:
            equipment = ctx.equipments.get(equipment_id)
            if equipment is not None and "brightness" in equipment.order_bindings:
                sent += bool(ctx.execute_order(equipment_id, "brightness", brightness))
        return sent


class Deadline:
    """A timer whose expiry is kept in ``ctx.state[key]`` (ISO), so that it survives a restart.

    ``restore()`` re-arms a stored expiry when the instance starts again; one that passed while the
    engine was down fires at the next clock tick.
    """

    def __init__(self, ctx: "RecipeContext", key: str, fn: Any):
        self._ctx = ctx
        self.key = key
        self._fn = fn
        self._timer: Any = None
        self.expires_ms: int | None = None

    @property
    def armed(self) -> bool:
        return self.expires_ms is not None

    def arm(self, at_ms: int) -> None:
        self._drop_timer()
        self.expires_ms = int(at_ms)
        self._ctx.state.set(self.key, iso_utc(self.expires_ms))
        self._timer = self._ctx.call_at(self.expires_ms, self._fire)

    def arm_in(self, ms: int) -> None:
        self.arm(self._ctx.clock.now_ms() + int(ms))

    def cancel(self) -> None:
        self._drop_timer()
        self.expires_ms = None
        self._ctx.state.delete(self.key)

    def restore(self) -> bool:
        stored = self._ctx.state.get(self.key)
        if not isinstance(stored, str):
            return False
        try:
            at = parse_iso(stored)
        except ValueError:
            self._ctx.state.delete(self.key)
            return False
        self.arm(at)
        return True

    def _drop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        self.expires_ms = None
        self._ctx.state.delete(self.key)
        self._fn()


class Presence:
    """Someone is in the zone while it reports motion, and for ``timeout_ms`` after motion ends.

    The hold after motion is a :class:`Deadline` in ``state["presenceExpiresAt"]``, so it survives
    a restart. ``on_change`` is called whenever presence may have changed.
    """

    def __init__(self, ctx: "RecipeContext", zone_id: str, timeout_ms: int, on_change: Any):
        self.zone_id = zone_id
        self.timeout_ms = timeout_ms
        self._on_change = on_change
        self._hold = Deadline(ctx, "presenceExpiresAt", on_change)
        self.motion = bool((ctx.aggregator.data(zone_id) or {}).get("motion"))
        ctx.on("zone.data.changed", self._on_zone)
        self._hold.restore()

    @property
    def present(self) -> bool:
        return self.motion or self._hold.armed

    def _on_zone(self, event: dict[str, Any]) -> None:
        if event.get("zoneId") != self.zone_id:
            return
        motion = bool((event.get("aggregatedData") or {}).get("motion"))
        if motion == self.motion:
            return
        self.motion = motion
        if motion:
            self._hold.cancel()
        else:
            self._hold.arm_in(self.timeout_ms)
        self._on_change()


class OrderedLights:
    """Lights a recipe switches, on as they report or as the recipe ordered them.

    Plenty of bulbs and relays report their state late, lose the report, or never send one: a light
    counts as on when it reports on, or when the recipe turned it on and it has reported no state
    since. The lights still owing that report are kept in ``ctx.state[key]``, so that a restart keeps
    what the recipe ordered. Hand each ``equipment.data.changed`` event to ``observe`` before
    reading ``any_on``: a report of a light's state supersedes the order.
    """

    def __init__(self, ctx: "RecipeContext", equipment_ids: Iterable[str], key: str):
        self._ctx = ctx
        self.ids = list(equipment_ids)
        self.key = key
        stored = ctx.state.get(key)
        self.unreported: set[str] = {i for i in stored if i in self.ids} if isinstance(stored, list) else set()

    def any_on(self) -> bool:
        return bool(self.unreported) or self._ctx.helpers.is_any_light_on(self.ids)

    def turn_on(self) -> int:
        sent = {i for i in self.ids if self._ctx.helpers.switch_one(i, True)}
        self._owed(sent)
        return len(sent)

    def turn_off(self) -> int:
        sent = self._ctx.helpers.switch(self.ids, False)
        self._owed(set())
        return sent

    def observe(self, event: dict[str, Any]) -> None:
        """A light's report of its state (echo or not) replaces what was ordered."""
        equipment_id = event.get("equipmentId")
        if equipment_id not in self.unreported:
            return
        equipment = self._ctx.equipments.get(equipment_id)
        if equipment is None or event.get("alias") == self._ctx.helpers.state_alias(equipment):
            self._owed(self.unreported - {equipment_id})

    def _owed(self, ids: set[str]) -> None:
        self.unreported = ids
        if ids:
            self._ctx.state.set(self.key, sorted(ids))
        else:
            self._ctx.state.delete(self.key)
