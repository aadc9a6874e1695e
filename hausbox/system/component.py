"""System: sunlight, time zone, health and logs routes (alarms and health are the engine's own)."""

from hausbox.core.components import Component
from hausbox.system import events
from hausbox.system.sunlight import Sunlight


def setup(engine) -> None:  # noqa: ANN001
    engine.sunlight = Sunlight(engine.bus, engine.settings, engine.clock)


COMPONENT = Component(
    name="system",
    events=events.EVENTS,
    routes="hausbox.system.routes",
    setup=setup,
    start=lambda engine: engine.sunlight.start(),
    stop=lambda engine: engine.sunlight.stop(),
)
