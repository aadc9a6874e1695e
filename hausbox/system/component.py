"""System: sunlight, the storage watch, versions and self-update, time zone, health and logs routes
(alarms and health are the engine's own)."""

from hausbox.core.components import Component
from hausbox.core.storage import StorageWatch
from hausbox.system import events
from hausbox.system.sunlight import Sunlight
from hausbox.system.update import SelfUpdate
from hausbox.system.versions import VersionChecker


def setup(engine) -> None:  # noqa: ANN001
    engine.sunlight = Sunlight(engine.bus, engine.settings, engine.clock)
    engine.storage = StorageWatch(engine.config.data_dir, engine.alarms.raise_alarm, engine.alarms.resolve, engine.config.storage_low_bytes)
    engine.versions = VersionChecker(engine)
    engine.self_update = SelfUpdate(engine, engine.versions)


def start(engine) -> None:  # noqa: ANN001
    engine.sunlight.start()
    engine.storage.start()
    engine.versions.start()
    engine.self_update.start()


def stop(engine) -> None:  # noqa: ANN001
    engine.sunlight.stop()
    engine.storage.stop()
    engine.versions.stop()
    engine.self_update.stop()


COMPONENT = Component(
    name="system",
    events=events.EVENTS,
    routes="hausbox.system.routes",
    setup=setup,
    start=start,
    stop=stop,
)
