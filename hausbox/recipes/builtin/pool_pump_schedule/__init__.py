"""pool-pump-schedule: run a pool pump in up to three daily time windows.

ON is sent at the start of each window (``slotNStart``), OFF at its end (``slotNEnd``) unless
another window still holds; a window may cross midnight. Disabling or deleting the instance sends
OFF. On start (enable, restart, new parameters) the pump is put where the windows say: ON inside a
window; outside, OFF if the recipe had left it on (an end passed while the engine was down).
An engine shutdown sends nothing: the schedule resumes on return.
State: ``pumpOn`` (the recipe's last order), ``activeSlot``, ``nextChangeAt``.
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, in_window, iso_utc, load_texts, next_boundary

SLOT_COUNT = 3
PUMP_TYPES = ["pool_pump", "switch", "appliance"]


def windows(params: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [
        (n, params[f"slot{n}Start"], params[f"slot{n}End"])
        for n in range(1, SLOT_COUNT + 1)
        if params.get(f"slot{n}Start") is not None and params.get(f"slot{n}End") is not None
    ]


class PoolPumpRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.pump: str = params["pump"]
        self.windows = windows(params)
        self.timer: Any = None
        current = self.active_slot()
        if current is not None:
            self.switch(True, f"inside time slot {current}")
        elif ctx.state.get("pumpOn"):
            self.switch(False, "outside the time slots")
        self.schedule()

    def active_slot(self) -> int | None:
        now = self.ctx.clock.local_now()
        return next((n for n, start, end in self.windows if in_window(now, start, end)), None)

    def switch(self, on: bool, why: str) -> None:
        self.ctx.helpers.switch([self.pump], on)
        self.ctx.state.set("pumpOn", on)
        self.ctx.state.set("activeSlot", self.active_slot() if on else None)
        self.ctx.log(f"Pump {'ON' if on else 'OFF'} ({why})")

    def schedule(self) -> None:
        """A timer at the next start or end of any window."""
        now = self.ctx.clock.local_now()
        boundaries = []
        for n, start, end in self.windows:
            boundaries.append((next_boundary(now, start), 0, n, True))
            boundaries.append((next_boundary(now, end), 1, n, False))
        at, _, slot, starting = min(boundaries)
        self.ctx.state.set("nextChangeAt", iso_utc(int(at.timestamp() * 1000)))
        self.timer = self.ctx.call_at(int(at.timestamp() * 1000), lambda: self._boundary(slot, starting))

    def _boundary(self, slot: int, starting: bool) -> None:
        if starting:
            self.switch(True, f"time slot {slot} starts")
        elif self.active_slot() is None:
            self.switch(False, f"time slot {slot} ends")
        self.schedule()

    def stop(self) -> None:
        if self.ctx.stop_reason in ("disabled", "removed"):
            self.switch(False, f"instance {self.ctx.stop_reason}")
        self.ctx.state.delete("nextChangeAt")




class PoolPumpSchedule(Recipe):
    id = "pool-pump-schedule"
    slots = (Slot("pump", "equipment", required=True, constraints={"equipmentType": PUMP_TYPES}),) + tuple(
        Slot(f"slot{n}{edge}", "time", required=(n == 1), group=f"slot{n}") for n in range(1, SLOT_COUNT + 1) for edge in ("Start", "End")
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        pump = ctx.equipments.get(params["pump"])
        if "state" not in pump.order_bindings:
            raise InvalidParams(f"pump: {pump.name} has no state order")
        for n in range(2, SLOT_COUNT + 1):
            start, end = params.get(f"slot{n}Start"), params.get(f"slot{n}End")
            if (start is None) != (end is None):
                raise InvalidParams(f"slot{n}{'End' if end is None else 'Start'}: time slot {n} needs a start and an end")
        for n, start, end in windows(params):
            if start == end:
                raise InvalidParams(f"slot{n}End: time slot {n} must not end when it starts")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> PoolPumpRunner:
        return PoolPumpRunner(params, ctx)


def create_recipe() -> Recipe:
    return PoolPumpSchedule()
