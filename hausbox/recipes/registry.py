"""The recipe registry: every definition the engine knows, built-in or from a plugin."""

from __future__ import annotations

import importlib
import logging
from typing import Any, Callable

from hausbox.recipes.api import Recipe, check_definition

log = logging.getLogger("hausbox.recipes")

# The built-in recipes: modules of hausbox.recipes.builtin, each exporting create_recipe().
BUILTIN_MODULES = (
    "motion_light",
    "motion_light_dimmable",
    "switch_light",
    "state_watch",
    "presence_thermostat",
    "presence_heater",
    "pool_pump_schedule",
)


class RecipeRegistry:
    def __init__(self) -> None:
        self._recipes: dict[str, Recipe] = {}
        self._listeners: list[Callable[[str], None]] = []

    def register(self, recipe: Recipe, replace: bool = False) -> Recipe:
        """Add a definition (ValueError when it breaks the API's rules or its id is taken)."""
        check_definition(recipe)
        if recipe.id in self._recipes and not replace:
            raise ValueError(f"recipe {recipe.id} is already registered")
        self._recipes[recipe.id] = recipe
        for listener in self._listeners:
            listener(recipe.id)
        return recipe

    def unregister(self, recipe_id: str) -> None:
        self._recipes.pop(recipe_id, None)

    def on_registered(self, listener: Callable[[str], None]) -> None:
        """Told the id of each definition registered later (a plugin loaded after boot)."""
        self._listeners.append(listener)

    def load_builtins(self) -> None:
        for name in BUILTIN_MODULES:
            module = importlib.import_module(f"hausbox.recipes.builtin.{name}")
            self.register(module.create_recipe())

    def get(self, recipe_id: str) -> Recipe | None:
        return self._recipes.get(recipe_id)

    def all(self) -> list[Recipe]:
        return sorted(self._recipes.values(), key=lambda r: r.id)

    def list_json(self) -> list[dict[str, Any]]:
        return [recipe.to_json() for recipe in self.all()]
