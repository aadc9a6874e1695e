"""What a recipe gets: ``ReadContext`` (reads) and ``InstanceContext`` (a running instance), the
engine's implementations of the SDK's ``ValidationContext`` and ``RecipeContext`` protocols.

See ``hausbox/recipes/api.py`` for the contract. Everything a recipe registers (bus handlers,
timers) goes through the context, which wraps it so that an exception becomes a
``recipe.instance.error`` and is gone when the instance stops.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Protocol

from hausbox.core.clock import Clock, Timer
from hausbox.core.errors import ApiError
from hausbox.recipes.helpers import Helpers, normalise

if TYPE_CHECKING:
    from hausbox.equipments.manager import EquipmentManager
    from hausbox.zonecontrol.aggregation import ZoneAggregator
    from hausbox.zones.tree import ZoneTree

ECHO_WINDOW_MS = 5000


class Host(Protocol):
    """What a running context needs of the recipe manager that made it (no import back to it)."""

    equipments: Any
    zones: Any
    aggregator: Any
    clock: Clock
    sunlight: Any
    worker: Any  # the recipes worker: handlers and timers run there
    orders: Any

    def _guard(self, instance: Any, label: str, fn: Callable[..., Any], *args: Any) -> Any: ...

    def _persist_state(self, instance_id: str, key: str, text: str | None) -> None: ...

    def _state_written(self, instance: Any) -> None: ...

    def _write_log(self, instance: Any, message: str, level: str = "info", main: bool = True) -> None: ...


class ReadContext:
    """Read access for ``validate``: equipments, zones, aggregates, clock, the sun and helpers."""

    def __init__(self, equipments: "EquipmentManager", zones: "ZoneTree", aggregator: "ZoneAggregator", clock: Clock, sunlight: Any = None):
        self.equipments = equipments
        self.zones = zones
        self.aggregator = aggregator
        self.clock = clock
        self.sunlight = sunlight
        self.helpers = Helpers(self)


class StateStore:
    """An instance's persisted key/value state (JSON-able values); writes go to the database at once."""

    def __init__(self, values: dict[str, Any], persist: Callable[[str, str | None], None], changed: Callable[[], None]):
        self._values = values
        self._persist = persist
        self._changed = changed

    def get(self, key: str, default: Any = None) -> Any:
        value = self._values.get(key)
        return default if value is None else value

    def set(self, key: str, value: Any) -> None:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True)  # TypeError: not JSON-able
        if key in self._values and json.dumps(self._values[key], separators=(",", ":"), sort_keys=True) == text:
            return
        self._values[key] = json.loads(text)
        self._persist(key, text)
        self._changed()

    def delete(self, key: str) -> None:
        if key in self._values:
            del self._values[key]
            self._persist(key, None)
            self._changed()

    def clear(self) -> None:
        for key in list(self._values):
            self.delete(key)

    def all(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._values))


class InstanceContext(ReadContext):
    """The context of one running instance (see the recipe plugin API)."""

    def __init__(self, manager: Host, instance: Any, recipe_name: str):
        super().__init__(manager.equipments, manager.zones, manager.aggregator, manager.clock, manager.sunlight)
        self._manager = manager
        self._instance = instance
        self.instance_id = instance.id
        self.recipe_id = instance.recipe_id
        self.recipe_name = recipe_name
        self.logger = logging.getLogger(f"hausbox.recipe.{instance.recipe_id}")
        self.state = StateStore(instance.state, lambda k, v: manager._persist_state(instance.id, k, v), lambda: manager._state_written(instance))
        self.stop_reason: str | None = None
        self.closed = False
        self._unsubscribers: list[Callable[[], None]] = []
        self._timers: list[Timer] = []
        self._echoes: dict[tuple[str, str], tuple[Any, int]] = {}

    # ---- subscriptions and timers ------------------------------------------------------------------
    def on(self, event_type: str, handler: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Subscribe to a bus event for as long as the instance runs; returns the unsubscriber."""
        label = f"{event_type} handler"

        def guarded(event: dict[str, Any]) -> None:
            if not self.closed:
                self._manager._guard(self._instance, label, handler, event)

        off = self._manager.worker.on(event_type, guarded, outbound=True)
        self._unsubscribers.append(off)
        return off

    def call_at(self, when_ms: int, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` at ``when_ms`` (engine clock); a time in the past runs at the next tick."""
        if self.closed:
            raise RuntimeError("the instance is stopped")

        def guarded() -> None:
            # queued when due: a cancel() that ran in between still wins
            if not self.closed and not timer.cancelled:
                self._manager._guard(self._instance, "timer", fn)

        worker = self._manager.worker
        timer = self.clock.call_at(int(when_ms), lambda: worker.submit_outbound(guarded))
        self._timers = [t for t in self._timers if t.active] + [timer]
        return timer

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Timer:
        return self.call_at(self.clock.now_ms() + int(seconds * 1000), fn)

    # ---- actions on the home -------------------------------------------------------------------
    def execute_order(self, equipment_id: str, alias: str, value: Any) -> bool:
        """Send an order with this instance as its source; False (and a log line) when it fails."""
        if self.closed:
            self.logger.warning("%s: order %s=%r refused: instance stopped", self.instance_id, alias, value)
            return False
        equipment = self.equipments.get(equipment_id)
        label = equipment.name if equipment is not None else equipment_id
        self._echoes[(equipment_id, alias)] = (normalise(value), self.clock.now_ms())
        source = {"kind": "recipe", "instanceId": self.instance_id, "recipeName": self.recipe_name}
        try:
            result = self._manager.orders.execute(equipment_id, alias, value, source)
        except ApiError as error:
            self.log(f"Order {label} {alias}={value} failed: {error.message}", "warn")
            return False
        except Exception as error:  # a plugin's bug must not stop the recipe
            self.log(f"Order {label} {alias}={value} failed: {error}", "warn")
            return False
        sent = result.get("value", value) if isinstance(result, dict) else value
        self._echoes[(equipment_id, alias)] = (normalise(sent), self.clock.now_ms())
        return True

    def is_own_echo(self, equipment_id: str, alias: str, value: Any) -> bool:
        """Whether ``value`` on ``alias`` is the device answering this instance's order (within 5 s)."""
        sent = self._echoes.get((equipment_id, alias))
        if sent is None:
            return False
        expected, at = sent
        if self.clock.now_ms() - at > ECHO_WINDOW_MS:
            del self._echoes[(equipment_id, alias)]
            return False
        return normalise(value) == expected

    def sent_recently(self, equipment_id: str) -> bool:
        """Whether this instance sent any order to the equipment in the last 5 s (it may still settle)."""
        now = self.clock.now_ms()
        return any(eid == equipment_id and now - at <= ECHO_WINDOW_MS for (eid, _), (_, at) in self._echoes.items())

    def log(self, message: str, level: str = "info") -> None:
        self._manager._write_log(self._instance, message, level)

    # ---- the manager's side ----------------------------------------------------------------------
    def _close(self) -> None:
        self.closed = True
        for off in self._unsubscribers:
            off()
        self._unsubscribers.clear()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
