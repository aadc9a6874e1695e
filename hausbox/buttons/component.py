"""Button actions: what a press of a button equipment does."""

from hausbox.buttons import models
from hausbox.buttons.service import ButtonActions
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    engine.button_actions = ButtonActions(
        engine.db, engine.bus, engine.workers.create("buttons"), engine.clock, engine.equipments, engine.modes, engine.orders, engine.zone_orders, engine.action_refs
    )


COMPONENT = Component(name="buttons", requires=("modes", "zonecontrol"), entities=models.define_entities, routes="hausbox.buttons.routes", setup=setup)
