"""Saved charts."""

from hausbox.charts import models
from hausbox.charts.service import Charts
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    engine.charts = Charts(engine.db, engine.clock)


COMPONENT = Component(name="charts", entities=models.define_entities, routes="hausbox.charts.routes", setup=setup)
