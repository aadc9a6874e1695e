"""The recipe plugin API. Built-in recipes are registered through exactly this API.

A recipe is an automation template: a *definition* (what it needs, in typed slots) from which the
user creates *instances* (the definition plus parameters). A recipe package exports a factory::

    def create_recipe() -> Recipe

and the engine registers what it returns with ``engine.recipes.registry.register(recipe)``
(built-ins: ``hausbox/recipes/builtin/<id>/``, one folder each with ``manifest.json``, its code and
``texts/<lang>.json``, loaded from their manifests as a plugin is).

The definition
--------------
Subclass :class:`Recipe` and set:

- ``id``: lower-case words joined by dashes (``motion-light``); unique in the registry;
- ``slots``: a tuple of :class:`Slot`, the parameters an instance takes. ``type`` is one of
  ``zone``, ``equipment``, ``number``, ``duration``, ``time``, ``boolean``, ``text``, ``data-key``,
  ``object`` (a JSON object whose fields the recipe's ``validate`` checks, such as a watering slot);
  ``required``; ``list`` (the value is a list of that type); ``default`` (``defaultValue``,
  filled in when the parameter is absent); ``constraints`` (``equipmentType``: a type or a list of
  types an equipment must have; ``min``/``max`` for numbers, and for durations in ms); ``group``
  (slots shown together). The engine checks every value against its slot before the recipe sees
  it (a duration is ``"10m"``/``"30s"``/``"1h"`` or ms, at most 31 days; a time is ``"HH:MM"``;
  an equipment or zone must exist); parameters no slot declares are dropped;
- ``i18n``: ``{"en": {...}, "fr": {...}}`` (``load_texts(__name__)`` reads ``texts/<lang>.json``), both required, each with ``name``, ``description``,
  ``slots`` (``{slot id: {"name", "description"?}}``, every slot) and ``groups``
  (``{group: label}``, every group used). The English texts are the definition's own name,
  description and slot names;
- ``actions`` (optional): :class:`Action` tuples, the commands a running instance accepts through
  ``POST /recipe-instances/:id/actions`` (type ``cycle``: step through ``options`` of a state key);
- ``tile`` (optional): the dashboard tile declaration, a dict::

      {"stateKey": "currentMode",         # state value the tile shows
       "action": "set_mode",              # action the tile triggers (an id of ``actions``)
       "confirm": {"en": "...?", "fr": "...?"},   # a question asked before the action runs
       "confirmFrom": "recipe" | "param", # who decides whether the question is asked:
                                          #   "recipe": always; "param": the instance's own
       "confirmParam": "askFirst"}        #   boolean parameter named here (a boolean slot)

  ``confirmFrom`` defaults to ``"recipe"`` when ``confirm`` is given; ``confirmParam`` is required
  with ``"param"``. The registry refuses a tile that breaks these rules.

Two methods:

- ``validate(params, ctx)``: cross-field checks (e.g. "the lights are in the zone"). ``params``
  already passed the generic slot checks and carry the defaults. Raise :class:`InvalidParams`
  (or ``ValueError``) with a message that starts with the parameter's id:
  ``"lights[1]: not in the zone"``. The API answers 400 ``Invalid params: <message>``.
  ``ctx`` is a :class:`ValidationContext` (read access and helpers, no side effects).
- ``create_instance(params, ctx) -> Runner``: start the automation and return its runner. Must
  return quickly; everything later happens in handlers registered through ``ctx``.

The runner
----------
Any object with ``stop()`` and, when the definition has actions, ``on_action(action, payload)``
(:class:`Runner` is a convenient base). ``stop()`` is called when the instance is disabled,
deleted, re-parameterised, or when the engine shuts down: ``ctx.stop_reason`` says which
(``"disabled"``, ``"removed"``, ``"updated"``, ``"shutdown"``). Orders may still be sent from
``stop()``; after it returns the context is closed: its subscriptions and timers are gone, late
events are dropped and further orders are refused. ``on_action`` raises :class:`InvalidParams` for
a bad action or payload (the API answers 400).

The context (``ctx``, a :class:`RecipeContext` at run time)
----------------------------------------------------------
- ``ctx.instance_id``, ``ctx.recipe_id``, ``ctx.recipe_name``;
- ``ctx.on(event_type, handler)``: subscribe to a bus event; unsubscribed automatically on stop;
- ``ctx.call_at(when_ms, fn)`` / ``ctx.call_later(seconds, fn)``: cancellable timers (``.cancel()``)
  on the engine's clock, cancelled automatically on stop;
- ``ctx.equipments``, ``ctx.zones``, ``ctx.aggregator``: the equipment manager, the zone tree and
  the zone aggregator, **for reading** (``get``, ``in_zone``, ``data(zone_id)`` ...);
- ``ctx.execute_order(equipment_id, alias, value) -> bool``: an order through the normal order
  path, with source ``{"kind": "recipe", "instanceId", "recipeName"}``. A failure is logged in the
  execution log and returns False; it never raises. The value sent is remembered for 5 s so that
  ``ctx.is_own_echo(equipment_id, alias, value)`` tells the device's answer from a user's change
  (and ``ctx.sent_recently(equipment_id)`` whether it is still settling after one);
- ``ctx.state``: the instance's persisted key/value store (``get(key, default=None)``,
  ``set(key, value)`` with JSON-able values, ``delete(key)``, ``clear()``, ``all()``). It survives
  restarts; ``recipe.instance.state.changed`` is emitted once after each handler that wrote;
- ``ctx.log(message, level="info")``: a line in the execution log (``info``, ``warn``, ``error``)
  and in the main log;
- ``ctx.clock``: the engine's clock (``now_ms()``, ``local_now()``, ``tz``); never read the
  system time directly;
- ``ctx.helpers``: ``is_light_on(id)``, ``is_any_light_on(ids)``, ``turn_on_lights(ids)``,
  ``turn_off_lights(ids)``, ``set_lights_brightness(ids, value)``, ``parse_duration("10m" | "30s" |
  "1h" | ms) -> ms``, ``format_duration(ms) -> "10min"``, ``in_window(local_dt, "22:00", "06:00")``
  (windows may cross midnight), ``next_boundary(after_dt, "HH:MM")``, ``minutes_of("HH:MM")``
  (minutes since midnight; ValueError for anything else), ``order_alias(id, alias,
  category)``, ``switch(ids, on)`` / ``switch_one(id, on)`` (any ``state`` order),
  ``deadline(state_key, fn)``: a timer whose expiry is kept in the state, re-armed by
  ``.restore()`` after a restart (one that passed while the engine was down fires at once),
  ``sunrise(local_date) -> local datetime | None`` (None without the home's location), and
  ``ordered_lights(ids)``: lights on as they report or as the recipe ordered them while they have
  not reported (a bulb may report late or never; never wait for a report of your own order);
- ``ctx.logger``: a ``logging.Logger`` for debugging output (not the execution log).

Failures
--------
An exception escaping ``create_instance``, a handler, a timer or ``on_action`` never reaches the
engine: it is logged (execution log and main log) and announced as ``recipe.instance.error``
``{instanceId, recipeId, error}``. After a handler or timer failure the instance keeps running;
after a ``create_instance`` failure it is not running (enable it again to retry).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from hausbox.recipes.protocols import RecipeContext, ValidationContext

SLOT_TYPES = ("zone", "equipment", "number", "duration", "time", "boolean", "text", "data-key", "object")
LANGUAGES = ("en", "fr")
ACTION_TYPES = ("cycle",)
STOP_REASONS = ("disabled", "removed", "updated", "shutdown")
RECIPE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class InvalidParams(ValueError):
    """Parameters (or an action payload) a recipe refuses; the message names the parameter."""


@dataclass(frozen=True)
class Slot:
    """One typed parameter of a recipe. Its name and description come from the English texts."""

    id: str
    type: str
    required: bool = False
    list: bool = False
    default: Any = None
    constraints: dict[str, Any] | None = None
    group: str | None = None


@dataclass(frozen=True)
class Action:
    """A command a running instance accepts: ``cycle`` steps ``state_key`` through ``options``."""

    id: str
    type: str = "cycle"
    state_key: str | None = None
    options: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "type": self.type, "options": [dict(o) for o in self.options]}
        if self.state_key is not None:
            body["stateKey"] = self.state_key
        return body


class Runner:
    """A running instance. Override ``stop`` (and ``on_action`` when the recipe has actions)."""

    def stop(self) -> None:
        pass

    def on_action(self, action: str, payload: Any) -> None:
        raise InvalidParams(f"action: unknown action {action}")


class RunnerLike(Protocol):
    def stop(self) -> None: ...


class Recipe:
    """Base class of a recipe definition; see the module documentation."""

    id: str = ""
    slots: tuple[Slot, ...] = ()
    actions: tuple[Action, ...] = ()
    i18n: dict[str, dict[str, Any]] = {}
    tile: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.i18n["en"]["name"]

    @property
    def description(self) -> str:
        return self.i18n["en"]["description"]

    def slot(self, slot_id: str) -> Slot | None:
        return next((s for s in self.slots if s.id == slot_id), None)

    def validate(self, params: dict[str, Any], ctx: "ValidationContext") -> None:
        """Cross-field checks; raise InvalidParams("<param>: <what is wrong>")."""

    def create_instance(self, params: dict[str, Any], ctx: "RecipeContext") -> RunnerLike:
        raise NotImplementedError

    # ---- the definition as the API shows it ----------------------------------------------------
    def slot_json(self, slot: Slot) -> dict[str, Any]:
        texts = self.i18n["en"]["slots"][slot.id]
        body: dict[str, Any] = {
            "id": slot.id, "name": texts["name"], "description": texts.get("description", ""),
            "type": slot.type, "required": slot.required,
        }  # fmt: skip
        if slot.list:
            body["list"] = True
        if slot.default is not None:
            body["defaultValue"] = slot.default
        if slot.constraints:
            body["constraints"] = dict(slot.constraints)
        if slot.group:
            body["group"] = slot.group
        return body

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "recipeId": self.id,
            "name": self.name,
            "description": self.description,
            "slots": [self.slot_json(slot) for slot in self.slots],
            "i18n": {lang: _copy(texts) for lang, texts in self.i18n.items()},
        }
        if self.actions:
            body["actions"] = [action.to_json() for action in self.actions]
        if self.tile:
            body["tile"] = _copy(self.tile)
        return body


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


def check_definition(recipe: Recipe) -> None:
    """Raise ValueError when a definition breaks the rules above (the registry calls it)."""
    where = f"recipe {recipe.id or '?'}"
    if not isinstance(recipe.id, str) or not RECIPE_ID.match(recipe.id):
        raise ValueError(f"{where}: id must be lower-case words joined by dashes")
    ids = [slot.id for slot in recipe.slots]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{where}: slot ids must be unique")
    groups = {slot.group for slot in recipe.slots if slot.group}
    for slot in recipe.slots:
        if slot.type not in SLOT_TYPES:
            raise ValueError(f"{where}: slot {slot.id} has an unknown type {slot.type}")
        if slot.constraints and not set(slot.constraints) <= {"equipmentType", "min", "max"}:
            raise ValueError(f"{where}: slot {slot.id} has unknown constraints")
    for lang in LANGUAGES:
        texts = recipe.i18n.get(lang) if isinstance(recipe.i18n, dict) else None
        if not isinstance(texts, dict) or not texts.get("name") or not texts.get("description"):
            raise ValueError(f"{where}: i18n.{lang} needs a name and a description")
        for slot_id in ids:
            if not (texts.get("slots") or {}).get(slot_id, {}).get("name"):
                raise ValueError(f"{where}: i18n.{lang} has no name for slot {slot_id}")
        for group in groups:
            if not (texts.get("groups") or {}).get(group):
                raise ValueError(f"{where}: i18n.{lang} has no label for group {group}")
    action_ids = [action.id for action in recipe.actions]
    for action in recipe.actions:
        if action.type not in ACTION_TYPES or not action.options:
            raise ValueError(f"{where}: action {action.id} must be a cycle with options")
    tile = recipe.tile
    if tile is not None:
        if not isinstance(tile, dict):
            raise ValueError(f"{where}: tile must be an object")
        if tile.get("action") is not None and tile["action"] not in action_ids:
            raise ValueError(f"{where}: tile.action must name one of the recipe's actions")
        confirm_from = tile.get("confirmFrom", "recipe" if "confirm" in tile else None)
        if confirm_from not in (None, "recipe", "param"):
            raise ValueError(f"{where}: tile.confirmFrom must be recipe or param")
        if confirm_from is not None:
            confirm = tile.get("confirm")
            if not isinstance(confirm, dict) or not all(isinstance(confirm.get(lang), str) and confirm[lang] for lang in LANGUAGES):
                raise ValueError(f"{where}: tile.confirm needs the question in en and fr")
        if confirm_from == "param":
            slot = recipe.slot(tile.get("confirmParam") or "")
            if slot is None or slot.type != "boolean":
                raise ValueError(f"{where}: tile.confirmParam must name a boolean slot")
        elif "confirmParam" in tile:
            raise ValueError(f"{where}: tile.confirmParam goes with confirmFrom param")


Factory = Callable[[], Recipe]
