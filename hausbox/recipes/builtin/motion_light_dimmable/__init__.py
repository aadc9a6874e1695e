"""motion-light-dimmable: motion-light that also sets the brightness, by time of day.

Everything motion-light does (see ``motion_light.py``), plus:

- on lighting, the lights with a ``brightness`` order get ``brightness`` (1-254), or the brightness
  of the first of the three time slots (``slotNStart``, ``slotNEnd``, ``slotNBrightness``) that
  holds the current local time. A slot is all three values or none; it may cross midnight;
- a manual brightness change (not within 5 s of the recipe's own orders to that light) puts the
  recipe in override.
"""

from __future__ import annotations

from typing import Any

from hausbox.recipes.builtin.motion_light import (
    MotionLightRunner,
    check_lights,
    light_slots,
)
from hausbox.sdk import InvalidParams, Recipe, RecipeContext, Slot, ValidationContext, in_window, load_texts

SLOT_COUNT = 3
BRIGHTNESS = {"min": 1, "max": 254}


def _slot_slots() -> tuple[Slot, ...]:
    slots: list[Slot] = [Slot("brightness", "number", default=254, constraints=dict(BRIGHTNESS))]
    for n in range(1, SLOT_COUNT + 1):
        group = f"slot{n}"
        slots += [
            Slot(f"slot{n}Start", "time", group=group),
            Slot(f"slot{n}End", "time", group=group),
            Slot(f"slot{n}Brightness", "number", constraints=dict(BRIGHTNESS), group=group),
        ]
    return tuple(slots)




def time_slots(params: dict[str, Any]) -> list[tuple[str, str, float]]:
    found = []
    for n in range(1, SLOT_COUNT + 1):
        start, end, level = params.get(f"slot{n}Start"), params.get(f"slot{n}End"), params.get(f"slot{n}Brightness")
        if start is not None and end is not None and level is not None:
            found.append((start, end, level))
    return found


class DimmableRunner(MotionLightRunner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.default_brightness = params.get("brightness", 254)
        self.time_slots = time_slots(params)
        super().__init__(params, ctx)

    def brightness_now(self) -> float:
        now = self.ctx.clock.local_now()
        for start, end, level in self.time_slots:
            if in_window(now, start, end):
                return level
        return self.default_brightness

    def switch_on(self) -> None:
        super().switch_on()
        self.helpers.set_lights_brightness(self.lights, self.brightness_now())

    def manual_other(self, equipment_id: str, alias: str, value: Any) -> None:
        # A light that was just ordered may first report its old brightness: not the user's doing.
        if alias == "brightness" and self.any_on() and not self.override and not self.ctx.sent_recently(equipment_id):
            self.ctx.log(f"Manual brightness change ({value})")
            self.set_override(True)


class MotionLightDimmable(Recipe):
    id = "motion-light-dimmable"
    slots = light_slots() + _slot_slots()
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        check_lights(params, ctx)
        for n in range(1, SLOT_COUNT + 1):
            names = (f"slot{n}Start", f"slot{n}End", f"slot{n}Brightness")
            given = [name for name in names if params.get(name) is not None]
            if given and len(given) != len(names):
                missing = next(name for name in names if name not in given)
                raise InvalidParams(f"{missing}: time slot {n} needs a start, an end and a brightness")
            if given and params[names[0]] == params[names[1]]:
                raise InvalidParams(f"{names[1]}: time slot {n} must not end when it starts")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> DimmableRunner:
        return DimmableRunner(params, ctx)


def create_recipe() -> Recipe:
    return MotionLightDimmable()
