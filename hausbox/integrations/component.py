"""Integrations: the registry of built-in and installed integrations."""

from hausbox.core.components import Component
from hausbox.integrations import events
from hausbox.integrations.registry import IntegrationRegistry


def setup(engine) -> None:  # noqa: ANN001
    engine.integrations = IntegrationRegistry(engine.bus, engine.settings, engine.devices, engine.config.data_dir, engine.workers.gate)
    engine.integrations.load_builtins()
    engine.health.add_contributor(engine.integrations.health)


COMPONENT = Component(
    name="integrations",
    events=events.EVENTS,
    requires=("devices",),
    routes="hausbox.integrations.routes",
    setup=setup,
    start=lambda engine: engine.integrations.start_all(),
    disconnect=lambda engine: engine.integrations.stop_all(),
)
