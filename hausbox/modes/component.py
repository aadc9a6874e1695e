"""Modes: named home states with per-zone impacts."""

from hausbox.core.components import Component
from hausbox.modes import events, models
from hausbox.modes.references import References
from hausbox.modes.service import ModeService


def setup(engine) -> None:  # noqa: ANN001
    # recipe actions name instances of the recipe service, which is built later: looked up when needed
    engine.action_refs = References(engine.equipments, engine.zones, recipes=lambda: getattr(engine, "recipes", None))
    engine.modes = ModeService(engine.db, engine.bus, engine.clock, engine.zones, engine.orders, engine.action_refs)


COMPONENT = Component(name="modes", events=events.EVENTS, requires=("equipments", "zones"), entities=models.define_entities, routes="hausbox.modes.routes", setup=setup)
