"""What a recipe sees of its context, as protocols: the SDK hands these types to plugin authors.

The engine's own classes (``recipes/context.py``) implement them; recipes, helpers and the
parameter checks depend only on these, which keeps the recipes package free of import circles.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Protocol

from hausbox.core.clock import Clock, Timer


class ValidationContext(Protocol):
    """Read access for ``validate`` (and every running context): no side effects."""

    equipments: Any  # get(id), all(), datum_of(...), the equipments' read side
    zones: Any  # get(id), exists(id), descendants, the zone tree's read side
    aggregator: Any  # the aggregated data of a zone
    clock: Clock
    sunlight: Any  # the home's sun (``sunrise_ms(day)``), or None; read it through ``helpers.sunrise``
    helpers: Any  # hausbox.recipes.helpers.Helpers bound to this context


class StateStore(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...

    def delete(self, key: str) -> None: ...

    def clear(self) -> None: ...

    def all(self) -> dict[str, Any]: ...


class RecipeContext(ValidationContext, Protocol):
    """The context of one running instance (see the recipe API in ``recipes/api.py``)."""

    instance_id: str
    recipe_id: str
    recipe_name: str
    logger: logging.Logger
    state: StateStore
    stop_reason: str | None
    closed: bool

    def on(self, event_type: str, handler: Callable[[dict[str, Any]], None]) -> Callable[[], None]: ...

    def call_at(self, when_ms: int, fn: Callable[[], None]) -> Timer: ...

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Timer: ...

    def execute_order(self, equipment_id: str, alias: str, value: Any) -> bool: ...

    def is_own_echo(self, equipment_id: str, alias: str, value: Any) -> bool: ...

    def sent_recently(self, equipment_id: str) -> bool: ...

    def log(self, message: str, level: str = "info") -> None: ...
