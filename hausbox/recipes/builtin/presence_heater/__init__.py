"""presence-heater: pilot-wire heaters in comfort while someone is there, eco otherwise.

Pilot wire through a relay on the ``state`` order: comfort = relay OFF, eco = relay ON. Motion in
the zone puts the heaters in comfort; ``timeout`` after the last motion, eco. Inside the night
window (``nightStart`` to ``nightEnd``, may cross midnight) they stay in eco whatever the motion.
Checked on every motion change and every 60 s; the relays are switched only when the mode changes.
State: ``currentMode`` (comfort or eco), ``presenceExpiresAt``.
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, in_window, load_texts, parse_duration

CHECK_EVERY_S = 60
HEATER_TYPES = ["heater", "switch"]


class HeaterRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.zone_id: str = params["zone"]
        self.heaters: list[str] = list(params["heaters"])
        self.timeout_ms = parse_duration(params["timeout"])
        self.night = (params["nightStart"], params["nightEnd"]) if params.get("nightStart") and params.get("nightEnd") else None
        self.presence = ctx.helpers.presence(self.zone_id, self.timeout_ms, self.evaluate)
        ctx.call_later(CHECK_EVERY_S, self._tick)
        self.evaluate()

    def mode_now(self) -> str:
        if self.night and in_window(self.ctx.clock.local_now(), *self.night):
            return "eco"
        return "comfort" if self.presence.present else "eco"

    def evaluate(self) -> None:
        mode = self.mode_now()
        if mode == self.ctx.state.get("currentMode"):
            return
        # Pilot wire through a diode: the relay closed means eco, open means comfort.
        self.ctx.helpers.switch(self.heaters, on=(mode == "eco"))
        self.ctx.state.set("currentMode", mode)
        self.ctx.log(f"Heaters in {mode}")

    def _tick(self) -> None:
        self.ctx.call_later(CHECK_EVERY_S, self._tick)
        self.evaluate()


class PresenceHeater(Recipe):
    id = "presence-heater"
    slots = (
        Slot("zone", "zone", required=True),
        Slot("heaters", "equipment", required=True, list=True, constraints={"equipmentType": HEATER_TYPES}),
        Slot("timeout", "duration", default="30m"),
        Slot("nightStart", "time", group="night"),
        Slot("nightEnd", "time", group="night"),
    )
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        for index, heater_id in enumerate(params["heaters"]):
            heater = ctx.equipments.get(heater_id)
            if "state" not in heater.order_bindings:
                raise InvalidParams(f"heaters[{index}]: {heater.name} has no state order")
        if (params.get("nightStart") is None) != (params.get("nightEnd") is None):
            missing = "nightEnd" if params.get("nightEnd") is None else "nightStart"
            raise InvalidParams(f"{missing}: the night needs a start and an end")
        if parse_duration(params["timeout"]) <= 0:
            raise InvalidParams("timeout: must be longer than 0s")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> HeaterRunner:
        return HeaterRunner(params, ctx)


def create_recipe() -> Recipe:
    return PresenceHeater()
