"""The activity feed: what happened in the home."""

from hausbox.activity import events, models
from hausbox.activity.feed import ActivityFeed
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    engine.activity = ActivityFeed(
        engine.db, engine.bus, engine.workers.create("activity"), engine.clock, engine.zones, engine.equipments, sunlight=lambda: engine.aggregator.root_extras()
    )


COMPONENT = Component(
    name="activity",
    events=events.EVENTS,
    requires=("zonecontrol",),
    entities=models.define_entities,
    routes="hausbox.activity.routes",
    setup=setup,
    final_write=lambda engine: engine.activity.stop(),  # the items not yet stored
    checkpoint=lambda engine: engine.workers.get("activity").run_and_wait(engine.activity.flush),  # its worker writes them
)
