"""MQTT brokers and publishers: configuration, one client per broker, and the ``publishers`` worker."""

from hausbox.core.components import Component
from hausbox.publishers import events, models
from hausbox.publishers.service import PublisherService, Sources


def setup(engine) -> None:  # noqa: ANN001
    def recipe_state(instance_id: str):  # noqa: ANN202
        instance = engine.recipes.get_instance(instance_id)
        return instance["state"] if instance is not None else None

    sources = Sources(engine.equipments, engine.aggregator, recipe_state)
    engine.publishers = PublisherService(
        engine.db, engine.bus, engine.clock, engine.workers.create("publishers"), sources, engine.redactor.add_secret
    )


COMPONENT = Component(
    name="publishers",
    events=events.EVENTS,
    requires=("equipments", "zonecontrol", "recipes"),
    entities=models.define_entities,
    migrations="hausbox.publishers.migrations",
    routes="hausbox.publishers.routes",
    setup=setup,
    start=lambda engine: engine.publishers.start(),
    stop=lambda engine: engine.publishers.stop(),
    disconnect=lambda engine: engine.publishers.disconnect(),  # after the workers drained: queued messages went out
)
