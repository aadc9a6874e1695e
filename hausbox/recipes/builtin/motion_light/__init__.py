"""motion-light: lights on when the zone sees motion, off after a quiet timeout.

- Motion in the zone (its aggregated ``motion``, read once the device message that changed it has
  been processed whole) turns the lights on, unless the zone is brighter
  than ``luxThreshold`` or (with ``disableWhenDaylight``) the home's root zone says it is daylight.
- No motion for ``timeout`` turns them off. While lit by the recipe, a luminosity above
  ``luxThreshold`` x 1.1 turns them off (daylight came).
- A manual off while there is motion puts the recipe in override: it leaves the lights alone until
  the zone has been quiet for ``timeout``. A manual on while the zone is quiet arms the timeout.
- A press on one of ``buttons`` toggles the lights (off during motion also means override).
- ``maxOnDuration`` is a failsafe: lights on that long are turned off whatever the motion says.
- The device's echo of the recipe's own orders (within 5 s) is not a manual change.
- A light the recipe turned on counts as on until it reports its state, so that a bulb whose report
  is late, lost or never sent is still turned off by the timeout, the failsafe or a button.

State: ``overrideMode``, ``timerExpiresAt``, ``failsafeExpiresAt`` (both ISO; they survive a
restart, and a deadline passed while the engine was down is honoured on return),
``lightsOrderedOn`` (the lights turned on that have not reported since).
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import LIGHT_TYPES, InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, format_duration, load_texts, parse_duration

LUX_OFF_FACTOR = 1.1


def light_slots() -> tuple[Slot, ...]:
    return (
        Slot("zone", "zone", required=True),
        Slot("lights", "equipment", required=True, list=True, constraints={"equipmentType": list(LIGHT_TYPES)}),
        Slot("timeout", "duration", default="10m"),
        Slot("luxThreshold", "number", constraints={"min": 0}),
        Slot("maxOnDuration", "duration"),
        Slot("buttons", "equipment", list=True, constraints={"equipmentType": "button"}),
        Slot("disableWhenDaylight", "boolean", default=False),
    )




def check_lights(params: dict[str, Any], ctx: ValidationContext) -> None:
    """Every light lies in the zone (or below it) and has a ``state`` order; the timeout is not zero."""
    inside = {zone.id for zone in ctx.zones.descendants(params["zone"])}
    for index, light_id in enumerate(params["lights"]):
        light = ctx.equipments.get(light_id)
        if light.zone_id not in inside:
            raise InvalidParams(f"lights[{index}]: {light.name} is not in the zone")
        if "state" not in light.order_bindings:
            raise InvalidParams(f"lights[{index}]: {light.name} has no state order")
    if "timeout" in params and parse_duration(params["timeout"]) <= 0:
        raise InvalidParams("timeout: must be longer than 0s")
    if params.get("maxOnDuration") is not None and parse_duration(params["maxOnDuration"]) <= 0:
        raise InvalidParams("maxOnDuration: must be longer than 0s")


class MotionLightRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.helpers = ctx.helpers
        self.zone_id: str = params["zone"]
        self.lights: list[str] = list(params["lights"])
        self.buttons = set(params.get("buttons") or ())
        self.timeout_ms = parse_duration(params["timeout"])
        self.lux_threshold: float | None = params.get("luxThreshold")
        self.max_on_ms = parse_duration(params["maxOnDuration"]) if params.get("maxOnDuration") is not None else None
        self.daylight_off = bool(params.get("disableWhenDaylight"))
        self.switched = self.helpers.ordered_lights(self.lights)
        self.off_timer = self.helpers.deadline("timerExpiresAt", self._on_timeout)
        self.failsafe = self.helpers.deadline("failsafeExpiresAt", self._on_failsafe)
        self.lit_by_me = False
        self.motion: bool | None = None
        self.pending: Any = None  # the evaluation due once the current message is processed
        ctx.on("zone.data.changed", self._on_zone)
        ctx.on("equipment.data.changed", self._on_equipment)
        self.off_timer.restore()
        self.failsafe.restore()
        if not self.failsafe.armed and self.max_on_ms and self.any_on():
            self.failsafe.arm_in(self.max_on_ms)
        self._evaluate(self.zone_data())

    # ---- reading --------------------------------------------------------------------------------
    def zone_data(self) -> dict[str, Any]:
        return self.ctx.aggregator.data(self.zone_id) or {}

    def any_on(self) -> bool:
        """On as the lights report, or as the recipe ordered them while they have not reported."""
        return self.switched.any_on()

    @property
    def override(self) -> bool:
        return bool(self.ctx.state.get("overrideMode", False))

    def set_override(self, on: bool) -> None:
        if on != self.override:
            self.ctx.state.set("overrideMode", on)
            self.ctx.log("Override on: the lights are left alone until the zone is quiet" if on else "Override cleared")

    def lighting_allowed(self, data: dict[str, Any], log: bool) -> bool:
        """Whether lighting is allowed now (lux under the threshold, and not daylight when asked)."""
        lux = data.get("luminosity")
        if self.lux_threshold is not None and isinstance(lux, (int, float)) and lux > self.lux_threshold:
            if log:
                self.ctx.log(f"Motion, but bright enough ({lux:g} lx > {self.lux_threshold:g} lx)")
            return False
        if self.daylight_off:
            root = self.ctx.aggregator.data(self.ctx.zones.root().id) or {}
            if root.get("isDaylight") is True:
                if log:
                    self.ctx.log("Motion, but it is daylight")
                return False
        return True

    # ---- acting ---------------------------------------------------------------------------------
    def lights_on(self, reason: str) -> None:
        self.switch_on()
        self.lit_by_me = True
        if self.max_on_ms and not self.failsafe.armed:
            self.failsafe.arm_in(self.max_on_ms)
        self.ctx.log(f"Lights on ({reason})")

    def switch_on(self) -> None:
        self.switched.turn_on()

    def lights_off(self, reason: str) -> None:
        self.switched.turn_off()
        self.lit_by_me = False
        self.failsafe.cancel()
        self.ctx.log(f"Lights off ({reason})")

    # ---- events ---------------------------------------------------------------------------------
    def _on_zone(self, event: dict[str, Any]) -> None:
        # Decided once the message that caused the change is fully processed: a sensor reporting
        # {"illuminance": 200, "occupancy": true} changes the zone twice, key by key.
        if event.get("zoneId") == self.zone_id and self.pending is None:
            self.pending = self.ctx.call_later(0, self._settled)

    def _settled(self) -> None:
        self.pending = None
        self._evaluate(self.zone_data())

    def _evaluate(self, data: dict[str, Any]) -> None:
        motion = bool(data.get("motion"))
        rising = motion and self.motion is not True
        self.motion = motion
        on = self.any_on()
        if on and self.lit_by_me and not self.override and self.lux_threshold is not None:
            lux = data.get("luminosity")
            if isinstance(lux, (int, float)) and lux > self.lux_threshold * LUX_OFF_FACTOR:
                self.off_timer.cancel()
                self.lights_off(f"bright enough: {lux:g} lx")
                return
        if motion:
            if self.off_timer.armed:
                self.off_timer.cancel()
            if not self.override and not on and self.lighting_allowed(data, log=rising):
                self.lights_on("motion")
            return
        if (on or self.override) and not self.off_timer.armed:
            self.off_timer.arm_in(self.timeout_ms)

    def _on_timeout(self) -> None:
        was_override = self.override
        self.set_override(False)
        if self.any_on():
            self.lights_off(f"no motion for {format_duration(self.timeout_ms)}")
        elif not was_override:
            self.lit_by_me = False

    def _on_failsafe(self) -> None:
        if self.any_on():
            self.off_timer.cancel()
            self.lights_off(f"on for {format_duration(self.max_on_ms or 0)}, the maximum")
            if self.motion:
                self.set_override(True)

    def _on_equipment(self, event: dict[str, Any]) -> None:
        equipment_id, alias, value = event.get("equipmentId"), event.get("alias"), event.get("value")
        if equipment_id in self.buttons:
            if alias == "action" and value not in (None, ""):
                self.toggle()
            return
        if equipment_id not in self.lights:
            return
        self.switched.observe(event)
        if self.ctx.is_own_echo(equipment_id, alias, value):
            return
        equipment = self.ctx.equipments.get(equipment_id)
        if equipment is None:
            return
        if alias == self.helpers.state_alias(equipment):
            self.manual_switch(self.helpers.is_light_on(equipment_id))
        else:
            self.manual_other(equipment_id, alias, value)

    def manual_switch(self, on: bool) -> None:
        if on:
            self.set_override(False)
            if self.max_on_ms and not self.failsafe.armed:
                self.failsafe.arm_in(self.max_on_ms)
            if not self.motion and not self.off_timer.armed:
                self.off_timer.arm_in(self.timeout_ms)
            return
        if self.any_on():
            return
        self.lit_by_me = False
        self.failsafe.cancel()
        if self.motion:
            self.off_timer.cancel()
            self.set_override(True)
        elif not self.override:
            self.off_timer.cancel()

    def manual_other(self, equipment_id: str, alias: str, value: Any) -> None:
        """A manual change of another light value (the dimmable variant watches brightness)."""

    def toggle(self) -> None:
        if self.any_on():
            self.off_timer.cancel()
            self.lights_off("button")
            if self.motion:
                self.set_override(True)
        else:
            self.set_override(False)
            self.lights_on("button")
            if not self.motion:
                self.off_timer.arm_in(self.timeout_ms)


class MotionLight(Recipe):
    id = "motion-light"
    slots = light_slots()
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        check_lights(params, ctx)

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> MotionLightRunner:
        return MotionLightRunner(params, ctx)


def create_recipe() -> Recipe:
    return MotionLight()
