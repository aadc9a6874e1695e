"""Plugins: third-party integrations and recipes, installed from release archives (admin only).

Loaded at start (after the integrations and recipes they add to); held while the outbound gate is
closed. Plugins whose files are missing are fetched again in the ``plugins`` worker.
"""

from hausbox.core.components import Component
from hausbox.plugins import models
from hausbox.plugins.manager import PluginManager


def setup(engine) -> None:  # noqa: ANN001
    engine.plugins = PluginManager(
        engine.db, engine.settings, engine.integrations, engine.recipes, engine.devices, engine.workers.gate,
        engine.workers.create("plugins"), engine.config.data_dir,
    )  # fmt: skip


COMPONENT = Component(
    name="plugins",
    requires=("integrations", "recipes"),
    entities=models.define_entities,
    migrations="hausbox.plugins.migrations",
    routes="hausbox.plugins.routes",
    setup=setup,
    start=lambda engine: engine.plugins.start(),
)
