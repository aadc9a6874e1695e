"""auto-watering: water valves in turn at daily times, unless it rained or rain is coming.

``slots`` lists the waterings: ``[{"time": "06:00", "durations": {valveId: minutes, ...}}]``. At
each slot's local time the valves water one after the other, in the order given, each for its
minutes. The slot is skipped when the rain over 24 h (``rainEquipment``'s data ``rainAlias``) is
above ``rainThreshold`` (mm), or when the chance of rain tomorrow (``rainProbabilityEquipment``'s
data ``rainProbabilityAlias``) is above ``rainProbabilityThreshold`` (%). No weather integration
ships yet: both readings come from whatever equipment the user names, both are optional, and a
reading that is missing or not a number skips nothing.

Orders: an equipment order is one value on one alias, so the older engine's single message
``{state: "ON", on_time: s}`` becomes ``state`` ON at the start of a valve's turn and ``state`` OFF
at its end, both sent by the recipe: a valve is closed when its turn ends whether or not it
reports, and whatever timer of its own it may have. The turns are a timeline from the slot's start
kept in the state: after a restart the valve whose turn it is opens for the rest of its turn, and
a valve the recipe left open whose turn is over is closed. Every stop closes the open valve (water
never runs unattended); disabling, deleting or changing the instance also ends the watering, an
engine shutdown does not (it goes on on return). A slot whose time came while the engine was down
(or before the instance existed) waters the turns left, if any.

State: ``status`` (idle, watering, skipped), ``nextSlot`` (ISO), ``currentSlot`` (its time while
watering), ``lastSkipReason``, ``lastSlotAt`` (ISO start of the last slot handled), and
``currentValve`` / ``valveEndsAt`` (the valve the recipe opened and the end of its turn).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hausbox.sdk import InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, as_text, format_duration, iso_utc, load_texts, next_boundary, parse_iso

VALVE_TYPES = ("water_valve", "switch")
MAX_MINUTES = 720
MINUTES_A_DAY = 1440
MS_PER_MIN = 60_000
SLOT_FIELDS = {"time", "durations"}


@dataclass(frozen=True)
class Watering:
    """One slot: its local time and the valves' turns, ``(valve id, ms)`` in order."""

    time: str
    turns: tuple[tuple[str, int], ...]

    @property
    def total_ms(self) -> int:
        return sum(ms for _, ms in self.turns)

    def turn_at(self, started_ms: int, now_ms: int) -> tuple[str, int] | None:
        """``(valve, end of its turn)`` at ``now_ms`` in a watering started at ``started_ms``; None once over."""
        end = started_ms
        for valve, ms in self.turns:
            end += ms
            if now_ms < end:
                return valve, end
        return None


def waterings(slots: list[dict[str, Any]]) -> list[Watering]:
    return [Watering(slot["time"], tuple((valve, round(minutes * MS_PER_MIN)) for valve, minutes in slot["durations"].items())) for slot in slots]


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def latest_start(now: datetime, hhmm: str) -> int:
    """The last instant at or before ``now`` at local wall time ``hhmm`` (ms)."""
    at = next_boundary(now - timedelta(days=2), hhmm)
    while (following := next_boundary(at, hhmm)) <= now:
        at = following
    return to_ms(at)


# ---- parameters ----------------------------------------------------------------------------------
def check_slot(index: int, slot: dict[str, Any], ctx: ValidationContext) -> None:
    where = f"slots[{index}]"
    extra = sorted(set(slot) - SLOT_FIELDS)
    if extra:
        raise InvalidParams(f"{where}: unknown field {extra[0][:100]} (a slot has time and durations)")
    try:
        ctx.helpers.minutes_of(slot.get("time") if isinstance(slot.get("time"), str) else "")
    except ValueError:
        raise InvalidParams(f"{where}.time: must be a time like 06:00") from None
    durations = slot.get("durations")
    if not isinstance(durations, dict) or not durations:
        raise InvalidParams(f"{where}.durations: must give at least one valve its minutes")
    for valve_id, minutes in durations.items():
        check_turn(f"{where}.durations.{valve_id[:100]}", valve_id, minutes, ctx)


def check_turn(where: str, valve_id: str, minutes: Any, ctx: ValidationContext) -> None:
    valve = ctx.equipments.get(valve_id)
    if valve is None:
        raise InvalidParams(f"{where}: equipment not found")
    if valve.type not in VALVE_TYPES:
        raise InvalidParams(f"{where}: must be an equipment of type {' or '.join(VALVE_TYPES)} ({valve.name} is a {valve.type})")
    if "state" not in valve.order_bindings:
        raise InvalidParams(f"{where}: {valve.name} has no state order")
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0 < minutes <= MAX_MINUTES:
        raise InvalidParams(f"{where}: must be a number of minutes above 0 and at most {MAX_MINUTES}")


def check_no_overlap(plans: list[Watering], ctx: ValidationContext) -> None:
    """Each slot is over before the next one starts, round the clock."""
    spans = sorted((ctx.helpers.minutes_of(plan.time), plan.total_ms / MS_PER_MIN, index) for index, plan in enumerate(plans))
    for _, length, index in spans:
        if length >= MINUTES_A_DAY:
            raise InvalidParams(f"slots[{index}]: must water for less than a day in all")
    following = spans[1:] + [(spans[0][0] + MINUTES_A_DAY, 0, spans[0][2])]  # the first, the next day
    for (start, length, index), (next_start, _, next_index) in zip(spans, following):
        if start + length > next_start:
            raise InvalidParams(f"slots[{next_index}]: starts at {plans[next_index].time} while slots[{index}] still waters")


def check_reading(params: dict[str, Any], equipment_param: str, alias_param: str, ctx: ValidationContext) -> None:
    equipment_id = params.get(equipment_param)
    if equipment_id is None:
        return
    equipment = ctx.equipments.get(equipment_id)
    if params[alias_param] not in equipment.data_bindings:
        raise InvalidParams(f"{alias_param}: {equipment.name} has no data {params[alias_param]}")


# ---- the runner ----------------------------------------------------------------------------------
class WateringRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.params = params
        self.plans = waterings(params["slots"])
        self.open_valve: str | None = ctx.state.get("currentValve")  # ordered on, not yet off
        self.turn_timer: Any = None
        if ctx.state.get("status") is None:
            ctx.state.set("status", "idle")
        self.resume()
        self.schedule()

    # ---- the slots --------------------------------------------------------------------------------
    def schedule(self) -> None:
        """A timer at the next slot's start."""
        now = self.ctx.clock.local_now()
        at, index = min((next_boundary(now, plan.time), index) for index, plan in enumerate(self.plans))
        self.ctx.state.set("nextSlot", iso_utc(to_ms(at)))
        self.ctx.call_at(to_ms(at), lambda: self._slot_due(index, to_ms(at)))

    def _slot_due(self, index: int, started_ms: int) -> None:
        self.schedule()
        self.begin(index, started_ms)

    def resume(self) -> None:
        """On start: go on with the watering in progress, or with the turns left of a slot missed."""
        if self.ctx.state.get("status") == "watering":
            self.step()
            return
        self.close_valve()
        missed = self.missed_slot()
        if missed is not None:
            self.begin(*missed)

    def missed_slot(self) -> tuple[int, int] | None:
        """``(index, start)`` of a slot that started before now, not handled yet, with turns left."""
        now = self.ctx.clock.local_now()
        for index, plan in enumerate(self.plans):
            started = latest_start(now, plan.time)
            if started + plan.total_ms > to_ms(now) and iso_utc(started) != self.ctx.state.get("lastSlotAt"):
                return index, started
        return None

    def begin(self, index: int, started_ms: int) -> None:
        plan = self.plans[index]
        if self.current_run() is not None:
            self.finish(f"slot {plan.time} starts")
        state = self.ctx.state
        state.set("lastSlotAt", iso_utc(started_ms))
        reason = self.skip_reason()
        if reason is not None:
            state.set("status", "skipped")
            state.set("lastSkipReason", reason)
            self.ctx.log(f"Slot {plan.time} skipped: {reason}")
            return
        state.set("status", "watering")
        state.set("currentSlot", plan.time)
        self.ctx.log(f"Slot {plan.time}: watering {len(plan.turns)} valve(s) in turn")
        self.step()

    def current_run(self) -> tuple[Watering, int] | None:
        """The watering in progress: its slot and start (ms)."""
        state = self.ctx.state
        if state.get("status") != "watering":
            return None
        plan = next((p for p in self.plans if p.time == state.get("currentSlot")), None)
        try:
            started = parse_iso(state.get("lastSlotAt", ""))
        except ValueError:
            return None
        return (plan, started) if plan is not None else None

    def step(self) -> None:
        """Open the valve whose turn it is, close the one before; again at the end of the turn."""
        run = self.current_run()
        turn = run[0].turn_at(run[1], self.ctx.clock.now_ms()) if run is not None else None
        if self.open_valve is not None and (turn is None or turn[0] != self.open_valve):
            self.close_valve()
        if turn is None:
            self.finish("every valve watered")
            return
        valve, ends_ms = turn
        if valve != self.open_valve:
            self.open(valve, ends_ms)
        self.turn_timer = self.ctx.call_at(ends_ms, self.step)

    def finish(self, why: str) -> None:
        self.close_valve()
        if self.turn_timer is not None:
            self.turn_timer.cancel()
            self.turn_timer = None
        self.ctx.state.set("status", "idle")
        self.ctx.state.set("currentSlot", None)
        self.ctx.log(f"Watering over ({why})")

    # ---- rain -------------------------------------------------------------------------------------
    def skip_reason(self) -> str | None:
        p = self.params
        rain = self.reading(p.get("rainEquipment"), p["rainAlias"])
        if rain is not None and rain > p["rainThreshold"]:
            return f"{rain:g} mm of rain over 24 h, above {p['rainThreshold']:g} mm"
        chance = self.reading(p.get("rainProbabilityEquipment"), p["rainProbabilityAlias"])
        if chance is not None and chance > p["rainProbabilityThreshold"]:
            return f"{chance:g} % chance of rain tomorrow, above {p['rainProbabilityThreshold']:g} %"
        return None

    def reading(self, equipment_id: str | None, alias: str) -> float | None:
        """A number from an equipment's data; None (logged) when it has none to give."""
        if equipment_id is None:
            return None
        equipment = self.ctx.equipments.get(equipment_id)
        value = equipment.data.get(alias) if equipment is not None else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.ctx.log(f"No number in {self.name(equipment_id)}.{alias} ({as_text(value) or 'nothing'}): not skipping on it", "warn")
            return None
        return float(value)

    # ---- valves -----------------------------------------------------------------------------------
    def name(self, equipment_id: str) -> str:
        equipment = self.ctx.equipments.get(equipment_id)
        return equipment.name if equipment is not None else equipment_id

    def open(self, valve: str, ends_ms: int) -> None:
        self.ctx.helpers.switch_one(valve, True)
        self.open_valve = valve
        self.ctx.state.set("currentValve", valve)
        self.ctx.state.set("valveEndsAt", iso_utc(ends_ms))
        self.ctx.log(f"{self.name(valve)} on for {format_duration(ends_ms - self.ctx.clock.now_ms())}")

    def close_valve(self) -> None:
        if self.open_valve is None:
            return
        self.ctx.helpers.switch_one(self.open_valve, False)
        self.ctx.log(f"{self.name(self.open_valve)} off")
        self.open_valve = None
        self.ctx.state.delete("currentValve")
        self.ctx.state.delete("valveEndsAt")

    def stop(self) -> None:
        self.close_valve()  # water never runs unattended; after a shutdown the watering goes on on return
        if self.ctx.stop_reason != "shutdown" and self.current_run() is not None:
            self.finish(f"instance {self.ctx.stop_reason}")
        self.ctx.state.delete("nextSlot")


class AutoWatering(Recipe):
    id = "auto-watering"
    slots = (
        Slot("slots", "object", required=True, list=True),
        Slot("rainEquipment", "equipment", group="rain"),
        Slot("rainAlias", "data-key", default="rain_24h", group="rain"),
        Slot("rainThreshold", "number", default=5, constraints={"min": 0}, group="rain"),
        Slot("rainProbabilityEquipment", "equipment", group="forecast"),
        Slot("rainProbabilityAlias", "data-key", default="j1_rain_prob", group="forecast"),
        Slot("rainProbabilityThreshold", "number", default=75, constraints={"min": 0, "max": 100}, group="forecast"),
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        for index, slot in enumerate(params["slots"]):
            check_slot(index, slot, ctx)
        check_no_overlap(waterings(params["slots"]), ctx)
        check_reading(params, "rainEquipment", "rainAlias", ctx)
        check_reading(params, "rainProbabilityEquipment", "rainProbabilityAlias", ctx)

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> WateringRunner:
        return WateringRunner(params, ctx)


def create_recipe() -> Recipe:
    return AutoWatering()
