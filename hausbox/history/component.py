"""History: the local store of equipment values over time, and its writer (a worker)."""

from hausbox.core.components import Component
from hausbox.history.store import FILE_NAME, HistoryStore
from hausbox.history.writer import COMMIT_INTERVAL_KEY, MAX_WRITE_KEY, MIN_WRITE_KEY, HistoryWriter, check_commit_interval, check_write_interval


def setup(engine) -> None:  # noqa: ANN001
    store = HistoryStore(engine.config.data_dir / FILE_NAME)
    engine.settings.add_validator(COMMIT_INTERVAL_KEY, check_commit_interval)
    engine.settings.add_validator(MIN_WRITE_KEY, check_write_interval)
    engine.settings.add_validator(MAX_WRITE_KEY, check_write_interval)
    engine.history = HistoryWriter(
        store, engine.workers.create("history"), engine.clock, engine.settings, engine.equipments, engine.alarms, storage_full=lambda: engine.storage.write_failed()
    )


COMPONENT = Component(
    name="history",
    requires=("equipments", "system"),
    routes="hausbox.history.routes",
    backup_files=(FILE_NAME,),
    setup=setup,
    start=lambda engine: engine.history.start(),
    stop=lambda engine: engine.history.stop(),
    final_write=lambda engine: engine.history.final_write(),  # the points not yet committed
)
