"""The calendar: weekly slots that switch modes."""

from hausbox.calendar import events, models
from hausbox.calendar.service import CalendarService
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    engine.calendar = CalendarService(engine.db, engine.bus, engine.workers.create("calendar"), engine.clock, engine.settings, engine.modes)


COMPONENT = Component(
    name="calendar",
    events=events.EVENTS,
    requires=("modes",),
    entities=models.define_entities,
    routes="hausbox.calendar.routes",
    setup=setup,
    start=lambda engine: engine.calendar.start(),
    stop=lambda engine: engine.calendar.stop(),
)
