"""The zone tree."""

from hausbox.core.components import Component
from hausbox.zones import events, models
from hausbox.zones.tree import ZoneTree


def setup(engine) -> None:  # noqa: ANN001
    engine.zones = ZoneTree(engine.db, engine.bus)


COMPONENT = Component(name="zones", events=events.EVENTS, entities=models.define_entities, routes="hausbox.zones.routes", setup=setup)
