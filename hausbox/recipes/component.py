"""Recipes: automation instances driven by the pipeline's events (started on system.started)."""

from hausbox.core.components import Component
from hausbox.recipes import events, models
from hausbox.recipes.manager import RecipeManager


def setup(engine) -> None:  # noqa: ANN001
    engine.recipes = RecipeManager(
        engine.db, engine.bus, engine.workers.create("recipes"), engine.clock, engine.equipments, engine.zones, engine.aggregator, engine.orders, engine.sunlight
    )
    engine.activity.recipe_info = engine.recipes.info


COMPONENT = Component(
    name="recipes",
    events=events.EVENTS,
    requires=("activity", "modes", "zonecontrol"),
    entities=models.define_entities,
    routes="hausbox.recipes.routes",
    setup=setup,
    stop=lambda engine: engine.recipes.stop_all(),  # before the integrations: a runner may still send from stop()
)
