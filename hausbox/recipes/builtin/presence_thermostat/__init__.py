"""presence-thermostat: a thermostat's setpoint follows presence, night and preheat windows.

Modes and their setpoints: ``comfort`` (``comfortTemp``), ``eco`` (``ecoTemp``), ``night``
(``nightTemp``), ``cocoon`` (``cocoonTemp``). The automatic mode is, first match wins:

1. ``cocoon`` while cocoon is on (a press on one of ``cocoonButtons`` toggles it);
2. ``night`` inside the night window (``nightStart`` to ``nightEnd``, may cross midnight);
3. ``comfort`` while the zone sees motion, and for ``timeout`` after the last motion;
4. ``comfort`` inside a preheat window (``weekdayPreheat*`` Monday to Friday, ``weekendPreheat*``
   Saturday and Sunday);
5. ``eco`` otherwise.

The setpoint is sent when the automatic mode changes (checked on every motion change and every
60 s). The action ``set_mode {mode}`` (or without payload: the next mode) applies a mode by hand;
it holds until the automatic mode changes. State: ``currentMode``, ``autoMode``, ``cocoon``,
``presenceExpiresAt``.
"""

from __future__ import annotations

from typing import Any

from hausbox.sdk import Action, InvalidParams, Recipe, RecipeContext, Runner, Slot, ValidationContext, in_window, load_texts, parse_duration

CHECK_EVERY_S = 60
MODES = ("comfort", "eco", "night", "cocoon")
TEMPERATURE = {"min": 5, "max": 30}
WEEKEND = (5, 6)  # datetime.weekday(): Saturday, Sunday


def setpoint_alias(ctx: ValidationContext, equipment_id: str) -> str | None:
    return ctx.helpers.order_alias(equipment_id, "setpoint", "set_setpoint")


class ThermostatRunner(Runner):
    def __init__(self, params: dict[str, Any], ctx: RecipeContext):
        self.ctx = ctx
        self.params = params
        self.zone_id: str = params["zone"]
        self.thermostat: str = params["thermostat"]
        self.timeout_ms = parse_duration(params["timeout"])
        self.buttons = set(params.get("cocoonButtons") or ())
        self.presence = ctx.helpers.presence(self.zone_id, self.timeout_ms, self.evaluate)
        ctx.on("equipment.data.changed", self._on_equipment)
        self._tick_timer = ctx.call_later(CHECK_EVERY_S, self._tick)
        self.evaluate(force=ctx.state.get("currentMode") is None)

    # ---- the automatic mode -------------------------------------------------------------------------
    def temperature(self, mode: str) -> float:
        key = {"comfort": "comfortTemp", "eco": "ecoTemp", "night": "nightTemp", "cocoon": "cocoonTemp"}[mode]
        value = self.params.get(key)
        return value if value is not None else self.params["comfortTemp" if mode == "cocoon" else "ecoTemp"]

    def automatic_mode(self) -> str:
        p = self.params
        now = self.ctx.clock.local_now()
        if self.ctx.state.get("cocoon") and p.get("cocoonTemp") is not None:
            return "cocoon"
        if p.get("nightStart") and p.get("nightEnd") and p.get("nightTemp") is not None and in_window(now, p["nightStart"], p["nightEnd"]):
            return "night"
        if self.presence.present:
            return "comfort"
        prefix = "weekend" if now.weekday() in WEEKEND else "weekday"
        start, end = p.get(f"{prefix}PreheatStart"), p.get(f"{prefix}PreheatEnd")
        if start and end and in_window(now, start, end):
            return "comfort"
        return "eco"

    def evaluate(self, force: bool = False) -> None:
        mode = self.automatic_mode()
        if force or mode != self.ctx.state.get("autoMode"):
            self.ctx.state.set("autoMode", mode)
            self.apply(mode, "automatic")

    def apply(self, mode: str, why: str) -> None:
        temperature = self.temperature(mode)
        alias = setpoint_alias(self.ctx, self.thermostat) or "setpoint"
        self.ctx.execute_order(self.thermostat, alias, temperature)
        self.ctx.state.set("currentMode", mode)
        self.ctx.log(f"Mode {mode}: {temperature:g} °C ({why})")

    # ---- events ---------------------------------------------------------------------------------------
    def _tick(self) -> None:
        self._tick_timer = self.ctx.call_later(CHECK_EVERY_S, self._tick)
        self.evaluate()

    def _on_equipment(self, event: dict[str, Any]) -> None:
        if event.get("equipmentId") in self.buttons and event.get("alias") == "action" and event.get("value") not in (None, ""):
            cocoon = not self.ctx.state.get("cocoon", False)
            self.ctx.state.set("cocoon", cocoon)
            self.ctx.log("Cocoon on" if cocoon else "Cocoon off")
            self.evaluate()

    def on_action(self, action: str, payload: Any) -> None:
        if action != "set_mode":
            raise InvalidParams(f"action: unknown action {action}")
        mode = payload.get("mode") if isinstance(payload, dict) else payload
        if mode is None:
            current = self.ctx.state.get("currentMode")
            mode = MODES[(MODES.index(current) + 1) % len(MODES)] if current in MODES else MODES[0]
        if mode not in MODES:
            raise InvalidParams(f"mode: must be one of {', '.join(MODES)}")
        self.apply(mode, "set by hand")




class PresenceThermostat(Recipe):
    id = "presence-thermostat"
    slots = (
        Slot("zone", "zone", required=True),
        Slot("thermostat", "equipment", required=True, constraints={"equipmentType": "thermostat"}),
        Slot("comfortTemp", "number", default=20, constraints=dict(TEMPERATURE)),
        Slot("ecoTemp", "number", default=17, constraints=dict(TEMPERATURE)),
        Slot("timeout", "duration", default="30m"),
        Slot("nightTemp", "number", constraints=dict(TEMPERATURE), group="night"),
        Slot("nightStart", "time", group="night"),
        Slot("nightEnd", "time", group="night"),
        Slot("weekdayPreheatStart", "time", group="preheat"),
        Slot("weekdayPreheatEnd", "time", group="preheat"),
        Slot("weekendPreheatStart", "time", group="preheat"),
        Slot("weekendPreheatEnd", "time", group="preheat"),
        Slot("cocoonButtons", "equipment", list=True, constraints={"equipmentType": "button"}, group="cocoon"),
        Slot("cocoonTemp", "number", constraints=dict(TEMPERATURE), group="cocoon"),
    )
    actions = (
        Action("set_mode", "cycle", "currentMode", tuple({"value": m, "label": m.capitalize()} for m in MODES)),
    )
    tile = {"stateKey": "currentMode", "action": "set_mode"}
    i18n = load_texts(__name__)  # texts/<lang>.json

    def validate(self, params: dict[str, Any], ctx: ValidationContext) -> None:
        if setpoint_alias(ctx, params["thermostat"]) is None:
            raise InvalidParams("thermostat: it has no setpoint order")
        for group in (("nightTemp", "nightStart", "nightEnd"), ("weekdayPreheatStart", "weekdayPreheatEnd"), ("weekendPreheatStart", "weekendPreheatEnd")):
            given = [name for name in group if params.get(name) is not None]
            if given and len(given) != len(group):
                missing = next(name for name in group if name not in given)
                raise InvalidParams(f"{missing}: required with {', '.join(given)}")
        if params.get("cocoonButtons") and params.get("cocoonTemp") is None:
            raise InvalidParams("cocoonTemp: required with cocoonButtons")
        if parse_duration(params["timeout"]) <= 0:
            raise InvalidParams("timeout: must be longer than 0s")

    def create_instance(self, params: dict[str, Any], ctx: RecipeContext) -> ThermostatRunner:
        return ThermostatRunner(params, ctx)


def create_recipe() -> Recipe:
    return PresenceThermostat()
