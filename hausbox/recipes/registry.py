"""The recipe registry: every definition the engine knows, built-in or from a plugin."""

from __future__ import annotations

import importlib
import logging
from typing import Any, Callable

from hausbox.recipes.api import Recipe, check_definition
from hausbox.sdk.manifest import builtin_manifests

log = logging.getLogger("hausbox.recipes")

class RecipeRegistry:
    def __init__(self) -> None:
        self._recipes: dict[str, Recipe] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._unlisteners: list[Callable[[str], None]] = []

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
        if self._recipes.pop(recipe_id, None) is not None:
            for listener in self._unlisteners:
                listener(recipe_id)

    def on_unregistered(self, listener: Callable[[str], None]) -> None:
        """Told the id of each definition removed (a plugin disabled or uninstalled)."""
        self._unlisteners.append(listener)

    def on_registered(self, listener: Callable[[str], None]) -> None:
        """Told the id of each definition registered later (a plugin loaded after boot)."""
        self._listeners.append(listener)

    def load_builtins(self) -> None:
        """Every folder of hausbox.recipes.builtin with a recipe manifest, as a plugin would be loaded."""
        for module_name, manifest in builtin_manifests("hausbox.recipes.builtin", "recipe"):
            recipe = importlib.import_module(module_name).create_recipe()
            if recipe.id != manifest["id"]:
                raise ValueError(f"{module_name}: the recipe's id {recipe.id} is not its manifest's {manifest['id']}")
            self.register(recipe)

    def get(self, recipe_id: str) -> Recipe | None:
        return self._recipes.get(recipe_id)

    def all(self) -> list[Recipe]:
        return sorted(self._recipes.values(), key=lambda r: r.id)

    def list_json(self) -> list[dict[str, Any]]:
        return [recipe.to_json() for recipe in self.all()]
