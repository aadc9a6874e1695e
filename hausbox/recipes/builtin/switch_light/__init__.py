"""switch-light: buttons toggle a group of lights.

Any action of one of ``buttons`` toggles the lights: all off when any is on, else all on. With
``maxOnDuration`` the lights are turned off after being on that long (however they were lit).
A light the recipe turned on counts as on until it reports its state: a press turns off, and the
failsafe ends, a bulb that never reports.

State: ``failsafeExpiresAt`` (ISO), ``lightsOrderedOn`` (the lights turned on that have not
reported since); both survive a restart.
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import LIGHT_TYPES, InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, format_duration, load_texts, parse_duration


class SwitchLightRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.lights: list[str] = list(params["lights"])
        self.buttons = set(params["buttons"])
        self.max_on_ms = parse_duration(params["maxOnDuration"]) if params.get("maxOnDuration") is not None else None
        self.switched = ctx.helpers.ordered_lights(self.lights)
        self.failsafe = ctx.helpers.deadline("failsafeExpiresAt", self._on_failsafe)
        ctx.on("equipment.data.changed", self._on_equipment)
        self.failsafe.restore()
        self._follow_lights()

    def _follow_lights(self) -> None:
        """Arm the failsafe while a light is on, drop it once all are off."""
        if not self.max_on_ms:
            return
        if self.switched.any_on():
            if not self.failsafe.armed:
                self.failsafe.arm_in(self.max_on_ms)
        elif self.failsafe.armed:
            self.failsafe.cancel()

    def _on_equipment(self, event: dict[str, Any]) -> None:
        equipment_id = event.get("equipmentId")
        if equipment_id in self.buttons and event.get("alias") == "action" and event.get("value") not in (None, ""):
            self.toggle(f"button {event['value']}")
        elif equipment_id in self.lights:
            self.switched.observe(event)
            self._follow_lights()

    def toggle(self, reason: str) -> None:
        if self.switched.any_on():
            self.switched.turn_off()
            self.ctx.log(f"Lights off ({reason})")
        else:
            self.switched.turn_on()
            self.ctx.log(f"Lights on ({reason})")
        self._follow_lights()

    def _on_failsafe(self) -> None:
        if self.switched.any_on():
            self.switched.turn_off()
            self.ctx.log(f"Lights off (on for {format_duration(self.max_on_ms or 0)}, the maximum)")


class SwitchLight(Recipe):
    id = "switch-light"
    slots = (
        Slot("zone", "zone", required=True),
        Slot("lights", "equipment", required=True, list=True, constraints={"equipmentType": list(LIGHT_TYPES)}),
        Slot("buttons", "equipment", required=True, list=True, constraints={"equipmentType": "button"}),
        Slot("maxOnDuration", "duration"),
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        for index, light_id in enumerate(params["lights"]):
            light = ctx.equipments.get(light_id)
            if "state" not in light.order_bindings:
                raise InvalidParams(f"lights[{index}]: {light.name} has no state order")
        if params.get("maxOnDuration") is not None and parse_duration(params["maxOnDuration"]) <= 0:
            raise InvalidParams("maxOnDuration: must be longer than 0s")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> SwitchLightRunner:
        return SwitchLightRunner(params, ctx)


def create_recipe() -> Recipe:
    return SwitchLight()
