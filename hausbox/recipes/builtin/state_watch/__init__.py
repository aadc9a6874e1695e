"""state-watch: raise an alarm when an equipment value stays at a watched value.

The value of ``dataKey`` on ``equipment`` is compared with ``watchValue`` as text (``true``,
``OPEN``, ``21``). At least one of:

- ``delay``: the alarm goes off once the value has been the watched one that long;
- ``repeatInterval``: while the alarm is on, it is raised again at that interval (without a
  delay, the alarm goes off as soon as the value is the watched one);
- ``checkTime``: every day at that local time, the alarm goes off if the value is the watched one.

When the value changes to anything else, the alarm ends. State: ``alarm``, ``alarmSince``,
``alarmCount``, ``currentValue``, ``watchStartedAt`` (a watch survives a restart: a delay that
ended while the engine was down raises the alarm on return).
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, as_text, format_duration, iso_utc, load_texts, next_boundary, parse_duration, parse_iso


class StateWatchRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.equipment_id: str = params["equipment"]
        self.key: str = params["dataKey"]
        self.watch_value: str = as_text(params["watchValue"])
        self.delay_ms = parse_duration(params["delay"]) if params.get("delay") is not None else None
        self.repeat_ms = parse_duration(params["repeatInterval"]) if params.get("repeatInterval") is not None else None
        self.check_time: str | None = params.get("checkTime")
        equipment = ctx.equipments.get(self.equipment_id)
        self.label = f"{equipment.name if equipment else self.equipment_id}.{self.key}"
        self.delay_timer: Any = None
        self.repeat_timer: Any = None
        self.check_timer: Any = None
        ctx.on("equipment.data.changed", self._on_equipment)
        self._restore(equipment.data.get(self.key) if equipment else None)
        if self.check_time:
            self._arm_check()

    # ---- the watch ------------------------------------------------------------------------------
    def matches(self, value: Any) -> bool:
        return value is not None and as_text(value) == self.watch_value

    def _restore(self, value: Any) -> None:
        state = self.ctx.state
        state.set("currentValue", None if value is None else as_text(value))
        if not self.matches(value):
            self._end_watch()
            return
        started = state.get("watchStartedAt")
        try:
            started_ms = parse_iso(started) if isinstance(started, str) else None
        except ValueError:
            started_ms = None
        if started_ms is None:
            self._begin_watch()
        elif state.get("alarm"):
            if self.repeat_ms:
                self.repeat_timer = self.ctx.call_later(self.repeat_ms / 1000, self._repeat)
        elif self.delay_ms is not None:
            self.delay_timer = self.ctx.call_at(started_ms + self.delay_ms, self._delay_over)
        elif self.repeat_ms:
            self.raise_alarm("watched value")

    def _on_equipment(self, event: dict[str, Any]) -> None:
        if event.get("equipmentId") != self.equipment_id or event.get("alias") != self.key:
            return
        value = event.get("value")
        self.ctx.state.set("currentValue", None if value is None else as_text(value))
        watching = self.ctx.state.get("watchStartedAt") is not None
        if self.matches(value):
            if not watching:
                self._begin_watch()
        elif watching or self.ctx.state.get("alarm"):
            self._end_watch()

    def _begin_watch(self) -> None:
        self.ctx.state.set("watchStartedAt", iso_utc(self.ctx.clock.now_ms()))
        if self.delay_ms is not None:
            self.delay_timer = self.ctx.call_later(self.delay_ms / 1000, self._delay_over)
        elif self.repeat_ms:
            self.raise_alarm(f"{self.label} is {self.watch_value}")

    def _end_watch(self) -> None:
        for timer in (self.delay_timer, self.repeat_timer):
            if timer is not None:
                timer.cancel()
        self.delay_timer = self.repeat_timer = None
        state = self.ctx.state
        if state.get("alarm"):
            self.ctx.log(f"{self.label} is no longer {self.watch_value}: alarm over")
        state.set("alarm", False)
        state.set("alarmCount", 0)
        state.delete("alarmSince")
        state.delete("watchStartedAt")

    # ---- the alarm ------------------------------------------------------------------------------
    def raise_alarm(self, why: str) -> None:
        state = self.ctx.state
        if not state.get("alarm"):
            state.set("alarm", True)
            state.set("alarmSince", iso_utc(self.ctx.clock.now_ms()))
        state.set("alarmCount", int(state.get("alarmCount", 0)) + 1)
        self.ctx.log(f"Alarm: {why}", "warn")
        if self.repeat_ms:
            if self.repeat_timer is not None:
                self.repeat_timer.cancel()
            self.repeat_timer = self.ctx.call_later(self.repeat_ms / 1000, self._repeat)

    def _delay_over(self) -> None:
        self.delay_timer = None
        self.raise_alarm(f"{self.label} has been {self.watch_value} for {format_duration(self.delay_ms or 0)}")

    def _repeat(self) -> None:
        self.repeat_timer = None
        if self.ctx.state.get("alarm"):
            self.raise_alarm(f"{self.label} is still {self.watch_value}")

    def _arm_check(self) -> None:
        at = next_boundary(self.ctx.clock.local_now(), self.check_time)  # type: ignore[arg-type]
        self.check_timer = self.ctx.call_at(int(at.timestamp() * 1000), self._check)

    def _check(self) -> None:
        self._arm_check()
        equipment = self.ctx.equipments.get(self.equipment_id)
        value = equipment.data.get(self.key) if equipment else None
        if self.matches(value):
            self.raise_alarm(f"{self.label} is {self.watch_value} at {self.check_time}")


class StateWatch(Recipe):
    id = "state-watch"
    slots = (
        Slot("zone", "zone"),
        Slot("equipment", "equipment", required=True),
        Slot("dataKey", "data-key", required=True),
        Slot("watchValue", "text", required=True),
        Slot("delay", "duration"),
        Slot("repeatInterval", "duration"),
        Slot("checkTime", "time"),
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        if all(params.get(name) is None for name in ("delay", "repeatInterval", "checkTime")):
            raise InvalidParams("delay: one of delay, repeatInterval or checkTime is required")
        if params.get("repeatInterval") is not None and parse_duration(params["repeatInterval"]) < 1000:
            raise InvalidParams("repeatInterval: must be at least 1s")
        equipment = ctx.equipments.get(params["equipment"])
        if params["dataKey"] not in equipment.data_bindings:
            raise InvalidParams(f"dataKey: {equipment.name} has no data {params['dataKey']}")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> StateWatchRunner:
        return StateWatchRunner(params, ctx)


def create_recipe() -> Recipe:
    return StateWatch()
