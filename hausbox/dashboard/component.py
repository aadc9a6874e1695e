"""Dashboard widgets."""

from hausbox.core.components import Component
from hausbox.dashboard import models
from hausbox.dashboard.widgets import DashboardWidgets


def setup(engine) -> None:  # noqa: ANN001
    engine.dashboard = DashboardWidgets(engine.db, engine.bus, engine.clock, engine.zones, engine.equipments)


COMPONENT = Component(name="dashboard", requires=("equipments", "zones"), entities=models.define_entities, routes="hausbox.dashboard.routes", setup=setup)
