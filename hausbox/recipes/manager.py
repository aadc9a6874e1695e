"""Recipe instances: creation with validated params, lifecycle, state, execution log, events.

Instances live in memory (with their state) and are written through to the database. Enabled
instances are started once ``system.started`` has been emitted (and at once when created or enabled
later). A recipe that raises, in ``create_instance`` or in anything it registered through its
context, is logged and announced as ``recipe.instance.error``; the engine and the other instances
carry on.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, Callable

from pony import orm

from hausbox.core.bus import EventBus
from hausbox.core.clock import Clock, iso_utc
from hausbox.core.errors import ApiError, BadRequest, NotFound
from hausbox.core.workers import Worker
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import OrderService
from hausbox.recipes.api import InvalidParams, Recipe
from hausbox.recipes.context import InstanceContext, ReadContext
from hausbox.recipes.params import check_params
from hausbox.recipes.registry import RecipeRegistry
from hausbox.zonecontrol.aggregation import ZoneAggregator
from hausbox.zones.tree import ZoneTree

log = logging.getLogger("hausbox.recipes")

LOG_LEVELS = {"info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
LOG_KEEP = 1000  # execution-log rows kept per instance
LOG_PRUNE_EVERY = 100  # writes between two prunings
MESSAGE_MAX = 2000


class Instance:
    __slots__ = ("id", "recipe_id", "params", "enabled", "created_at", "updated_at", "state", "runner", "ctx", "depth", "state_dirty", "log_writes")

    def __init__(self, id: str, recipe_id: str, params: dict[str, Any], enabled: bool, created_at: int, updated_at: int):
        self.id, self.recipe_id, self.params, self.enabled = id, recipe_id, params, enabled
        self.created_at, self.updated_at = created_at, updated_at
        self.state: dict[str, Any] = {}
        self.runner: Any = None
        self.ctx: InstanceContext | None = None
        self.depth = 0
        self.state_dirty = False
        self.log_writes = 0

    @property
    def running(self) -> bool:
        return self.runner is not None


class RecipeManager:
    def __init__(
        self, db: orm.Database, bus: EventBus, worker: Worker, clock: Clock, equipments: EquipmentManager, zones: ZoneTree,
        aggregator: ZoneAggregator, orders: OrderService, sunlight: Any = None,
    ):  # fmt: skip
        self._db = db
        self.bus = bus
        # Every recipe handler and timer runs in this worker: in order, beside the message path.
        self.worker = worker
        self.clock = clock
        self.equipments = equipments
        self.zones = zones
        self.aggregator = aggregator
        self.orders = orders
        self.sunlight = sunlight  # sunrise_ms(day), for helpers.sunrise
        self.registry = RecipeRegistry()
        self.registry.load_builtins()
        self.registry.on_registered(self._on_recipe_registered)
        self.registry.on_unregistered(self._on_recipe_unregistered)
        self._instances: dict[str, Instance] = {}
        self._started = False
        self._load()
        worker.on("system.started", lambda _e: self.start())

    def _load(self) -> None:
        with orm.db_session:
            for row in self._db.RecipeInstance.select():
                try:
                    params = json.loads(row.params)
                except ValueError:
                    params = {}
                self._instances[row.id] = Instance(row.id, row.recipe_id, params if isinstance(params, dict) else {}, bool(row.enabled), row.created_at, row.updated_at)
            for row in self._db.RecipeState.select():
                instance = self._instances.get(row.instance_id)
                if instance is not None and row.value is not None:
                    try:
                        instance.state[row.key] = json.loads(row.value)
                    except ValueError:
                        pass

    # ---- lifecycle of the whole -----------------------------------------------------------------------
    def start(self) -> None:
        """Start every enabled instance (called on ``system.started``)."""
        self._started = True
        for instance in self._ordered():
            if instance.enabled and not instance.running:
                self._start(instance)

    def stop_all(self) -> None:
        """Stop every runner for shutdown; nothing is announced, enabled flags are kept."""
        self._started = False
        for instance in self._ordered():
            self._stop(instance, "shutdown", announce=False)

    def _on_recipe_registered(self, recipe_id: str) -> None:
        if self._started:
            for instance in self._ordered():
                if instance.recipe_id == recipe_id and instance.enabled and not instance.running:
                    self._start(instance)

    def _on_recipe_unregistered(self, recipe_id: str) -> None:
        for instance in self._ordered():
            if instance.recipe_id == recipe_id:
                self._stop(instance, "recipe removed")

    # ---- reads -------------------------------------------------------------------------------------
    def _ordered(self) -> list[Instance]:
        return sorted(self._instances.values(), key=lambda i: (i.created_at, i.id))

    def require(self, instance_id: str) -> Instance:
        instance = self._instances.get(instance_id)
        if instance is None:
            raise NotFound(f"Recipe instance not found: {instance_id}")
        return instance

    def recipe(self, recipe_id: str) -> Recipe:
        recipe = self.registry.get(recipe_id)
        if recipe is None:
            raise NotFound(f"Recipe not found: {recipe_id[:200]}")
        return recipe

    def definitions_json(self) -> list[dict[str, Any]]:
        return self.registry.list_json()

    def definition_json(self, recipe_id: str) -> dict[str, Any]:
        return self.recipe(recipe_id).to_json()

    def to_json(self, instance: Instance) -> dict[str, Any]:
        return {
            "id": instance.id,
            "recipeId": instance.recipe_id,
            "params": json.loads(json.dumps(instance.params)),
            "enabled": instance.enabled,
            "running": instance.running,
            "createdAt": iso_utc(instance.created_at),
            "updatedAt": iso_utc(instance.updated_at),
            "state": json.loads(json.dumps(instance.state)),
        }

    def list_json(self) -> list[dict[str, Any]]:
        return [self.to_json(instance) for instance in self._ordered()]

    def get_instance(self, instance_id: str) -> dict[str, Any] | None:
        """The instance as the API shows it, or None when there is no such instance."""
        instance = self._instances.get(instance_id)
        return self.to_json(instance) if instance is not None else None

    def info(self, instance_id: str) -> dict[str, Any]:
        """``{"recipeName", "zoneId"}`` of an instance (empty when unknown), for the activity feed."""
        instance = self._instances.get(instance_id)
        if instance is None:
            return {}
        recipe = self.registry.get(instance.recipe_id)
        zone_id = instance.params.get("zone")
        return {"recipeName": recipe.name if recipe else instance.recipe_id, "zoneId": zone_id if isinstance(zone_id, str) else None}

    def log_entries(self, instance_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The execution log, newest first."""
        self.require(instance_id)
        with orm.db_session:
            rows = self._db.select(
                "SELECT id, timestamp, message, level FROM recipe_log WHERE instance_id = $iid ORDER BY id DESC LIMIT $limit",
                {"iid": instance_id, "limit": int(limit)},
            )
        return [{"id": r[0], "instanceId": instance_id, "timestamp": iso_utc(r[1]), "message": r[2], "level": r[3]} for r in rows]

    # ---- writes ------------------------------------------------------------------------------------
    def _check(self, recipe: Recipe, params: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Generic slot checks, then the recipe's own; BadRequest ``Invalid params: <param>: …``."""
        ctx = ReadContext(self.equipments, self.zones, self.aggregator, self.clock, self.sunlight)
        try:
            stored, resolved = check_params(recipe, params, ctx)
            recipe.validate(dict(resolved), ctx)
        except (InvalidParams, ValueError) as error:
            raise BadRequest(f"Invalid params: {error}") from None
        except ApiError:
            raise
        except Exception as error:
            log.exception("recipe %s: validate failed", recipe.id)
            raise BadRequest(f"Invalid params: {error or error.__class__.__name__}") from None
        return stored, resolved

    def create(self, recipe_id: str, params: Any) -> dict[str, Any]:
        recipe = self.recipe(recipe_id)
        stored, _ = self._check(recipe, params)
        stamp = self.clock.now_ms()
        instance = Instance(str(uuid.uuid4()), recipe.id, stored, True, stamp, stamp)
        with orm.db_session:
            self._db.RecipeInstance(id=instance.id, recipe_id=instance.recipe_id, params=json.dumps(stored), enabled=True, created_at=stamp, updated_at=stamp)
        self._instances[instance.id] = instance
        self._emit("recipe.instance.created", instance)
        self._write_log(instance, "Instance created")
        self._start(instance)
        return self.to_json(instance)

    def update_params(self, instance_id: str, params: Any, merge: bool = True) -> dict[str, Any]:
        """Validate, stop, save, and start again if enabled.

        With ``merge`` (the default: a mode impact gives only what it changes) the params not given
        are kept and a null removes one; ``PUT /recipe-instances/:id`` replaces them all.
        """
        instance = self.require(instance_id)
        recipe = self.recipe(instance.recipe_id)
        if merge and isinstance(params, dict):
            params = {**instance.params, **params}
        stored, _ = self._check(recipe, params)
        self._stop(instance, "updated")
        instance.params = stored
        instance.updated_at = self.clock.now_ms()
        with orm.db_session:
            self._db.RecipeInstance[instance.id].set(params=json.dumps(stored), updated_at=instance.updated_at)
        self._write_log(instance, "Parameters updated")
        if instance.enabled:
            self._start(instance)
        return self.to_json(instance)

    def delete(self, instance_id: str) -> None:
        instance = self.require(instance_id)
        self._stop(instance, "removed")
        with orm.db_session:
            self._db.execute("DELETE FROM recipe_instances WHERE id = $iid", {"iid": instance.id})
        del self._instances[instance.id]
        self._emit("recipe.instance.removed", instance)

    def enable(self, instance_id: str) -> dict[str, Any]:
        instance = self.require(instance_id)
        if not instance.enabled:
            self._set_enabled(instance, True)
            self._write_log(instance, "Instance enabled")
        if not instance.running:
            self._start(instance)
        return {"success": True}

    def disable(self, instance_id: str) -> dict[str, Any]:
        instance = self.require(instance_id)
        if instance.enabled:
            self._set_enabled(instance, False)
            self._write_log(instance, "Instance disabled")
        self._stop(instance, "disabled")
        return {"success": True}

    def toggle(self, instance_id: str, enabled: bool) -> dict[str, Any]:
        """Enable or disable (button bindings and mode impacts call this)."""
        return self.enable(instance_id) if enabled else self.disable(instance_id)

    def _set_enabled(self, instance: Instance, enabled: bool) -> None:
        instance.enabled = enabled
        instance.updated_at = self.clock.now_ms()
        with orm.db_session:
            self._db.RecipeInstance[instance.id].set(enabled=enabled, updated_at=instance.updated_at)

    def run_action(self, instance_id: str, action: str, payload: Any = None) -> dict[str, Any]:
        instance = self.require(instance_id)
        if not instance.running:
            raise BadRequest("Instance not running")
        recipe = self.registry.get(instance.recipe_id)
        known = [a.id for a in recipe.actions] if recipe is not None else []
        if known and action not in known:
            raise BadRequest(f"action must be one of {', '.join(known)}")
        handler = getattr(instance.runner, "on_action", None)
        if handler is None:
            raise BadRequest("This recipe has no actions")
        instance.depth += 1
        try:
            handler(action, payload)
        except InvalidParams as error:
            raise BadRequest(str(error)) from None
        except ApiError:
            raise
        except Exception as error:
            self._fail(instance, f"action {action}", error)
            raise ApiError(f"Action failed: {error or error.__class__.__name__}", status=500) from None
        finally:
            instance.depth -= 1
            self._flush(instance)
        return {"ok": True}

    # ---- runners ---------------------------------------------------------------------------------------
    def _start(self, instance: Instance) -> bool:
        if instance.running:
            return True
        if self.worker.held_off:  # shadow mode, an inert instance: nothing starts
            log.info("recipe instance %s held off: outbound automation is disabled", instance.id)
            return False
        recipe = self.registry.get(instance.recipe_id)
        if recipe is None:
            log.warning("recipe instance %s: recipe %s is not installed; not started", instance.id, instance.recipe_id)
            return False
        try:
            _, resolved = self._check(recipe, instance.params)
        except ApiError as error:
            self._fail(instance, "start", error.message, traceback=False)
            return False
        ctx = InstanceContext(self, instance, recipe.name)
        instance.ctx = ctx
        instance.depth += 1
        try:
            runner = recipe.create_instance(resolved, ctx)
            if runner is None or not callable(getattr(runner, "stop", None)):
                raise TypeError("create_instance must return a runner with stop()")
        except Exception as error:
            ctx._close()
            instance.ctx = None
            self._fail(instance, "start", error)
            return False
        finally:
            instance.depth -= 1
        instance.runner = runner
        self._emit("recipe.instance.started", instance)
        self._flush(instance)
        return True

    def _stop(self, instance: Instance, reason: str, announce: bool = True) -> None:
        runner, ctx = instance.runner, instance.ctx
        if runner is None or ctx is None:
            return
        ctx.stop_reason = reason
        self._guard(instance, "stop", runner.stop)
        ctx._close()
        instance.runner = None
        instance.ctx = None
        if announce:
            self._emit("recipe.instance.stopped", instance)

    def _guard(self, instance: Instance, label: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run recipe code: an exception becomes a recipe.instance.error, state changes one event."""
        instance.depth += 1
        try:
            return fn(*args)
        except Exception as error:
            self._fail(instance, label, error)
            return None
        finally:
            instance.depth -= 1
            self._flush(instance)

    def _fail(self, instance: Instance, where: str, error: Any, traceback: bool = True) -> None:
        text = str(error) or error.__class__.__name__
        if traceback and isinstance(error, BaseException):
            log.error("recipe instance %s (%s): %s failed", instance.id, instance.recipe_id, where, exc_info=error)
        self._write_log(instance, f"Error ({where}): {text}", "error", main=not traceback)
        self.bus.emit("recipe.instance.error", instanceId=instance.id, recipeId=instance.recipe_id, error=text)

    def _emit(self, event_type: str, instance: Instance) -> None:
        self.bus.emit(event_type, instanceId=instance.id, recipeId=instance.recipe_id)

    # ---- state and log (called by the context) ------------------------------------------------------
    def _persist_state(self, instance_id: str, key: str, text: str | None) -> None:
        if instance_id not in self._instances:
            return
        with orm.db_session:
            row = self._db.RecipeState.get(instance_id=instance_id, key=key)
            if text is None:
                if row is not None:
                    row.delete()
            elif row is None:
                self._db.RecipeState(instance_id=instance_id, key=key, value=text)
            else:
                row.value = text

    def _state_written(self, instance: Instance) -> None:
        instance.state_dirty = True
        if instance.depth == 0:
            self._flush(instance)

    def _flush(self, instance: Instance) -> None:
        if instance.depth == 0 and instance.state_dirty and instance.id in self._instances:
            instance.state_dirty = False
            self._emit("recipe.instance.state.changed", instance)

    def _write_log(self, instance: Instance, message: str, level: str = "info", main: bool = True) -> None:
        level = {"warning": "warn", "debug": "info"}.get(level, level)
        if level not in LOG_LEVELS:
            level = "info"
        message = str(message)[:MESSAGE_MAX]
        if main:
            logging.getLogger(f"hausbox.recipe.{instance.recipe_id}").log(LOG_LEVELS[level], "%s: %s", instance.id, message)
        if instance.id not in self._instances:
            return
        with orm.db_session:
            self._db.RecipeLog(instance_id=instance.id, timestamp=self.clock.now_ms(), message=message, level=level)
        instance.log_writes += 1
        if instance.log_writes % LOG_PRUNE_EVERY == 0:
            with orm.db_session:
                self._db.execute(
                    "DELETE FROM recipe_log WHERE instance_id = $iid AND id < ("
                    " SELECT MIN(id) FROM (SELECT id FROM recipe_log WHERE instance_id = $iid ORDER BY id DESC LIMIT $keep))",
                    {"iid": instance.id, "keep": LOG_KEEP},
                )
