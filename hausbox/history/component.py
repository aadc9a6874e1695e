"""History: the local store of equipment values over time, its writer and its tier jobs (workers)."""

from hausbox.core.components import Component
from hausbox.history.jobs import TierJobs
from hausbox.history.store import FILE_NAME, HistoryStore
from hausbox.history.writer import COMMIT_INTERVAL_KEY, MAX_WRITE_KEY, MIN_WRITE_KEY, HistoryWriter, check_commit_interval, check_write_interval


def setup(engine) -> None:  # noqa: ANN001
    store = HistoryStore(engine.config.data_dir / FILE_NAME)
    engine.settings.add_validator(COMMIT_INTERVAL_KEY, check_commit_interval)
    engine.settings.add_validator(MIN_WRITE_KEY, check_write_interval)
    engine.settings.add_validator(MAX_WRITE_KEY, check_write_interval)
    worker = engine.workers.create("history")
    engine.history = HistoryWriter(
        store, worker, engine.bus, engine.clock, engine.settings, engine.equipments, engine.alarms,
        storage_full=lambda: engine.storage.write_failed(), split=engine.tariff.split,
    )  # fmt: skip
    engine.history_jobs = TierJobs(store, worker, engine.clock)


def start(engine) -> None:  # noqa: ANN001
    engine.history.start()
    engine.history_jobs.start()


def stop(engine) -> None:  # noqa: ANN001
    engine.history.stop()
    engine.history_jobs.stop()


def final_write(engine) -> None:  # noqa: ANN001
    engine.history.final_write()  # the points not yet committed
    engine.history.store.close()


COMPONENT = Component(
    name="history",
    requires=("equipments", "system", "energy"),
    routes="hausbox.history.routes",
    backup_files=(FILE_NAME,),
    setup=setup,
    start=start,
    stop=stop,
    final_write=final_write,
)
