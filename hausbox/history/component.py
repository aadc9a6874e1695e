"""History: the local store of equipment values over time, its writer and its tier jobs (workers)."""

from hausbox.core.components import Component
from hausbox.core.errors import ServiceUnavailable
from hausbox.history.export import InfluxExport
from hausbox.history.jobs import TierJobs
from hausbox.history.store import FILE_NAME, JOURNAL_NAME, HistoryStore
from hausbox.history.writer import COMMIT_INTERVAL_KEY, MAX_WRITE_KEY, MIN_WRITE_KEY, HistoryWriter, check_commit_interval, check_write_interval


def setup(engine) -> None:  # noqa: ANN001
    store = HistoryStore(engine.config.data_dir / FILE_NAME)
    engine.settings.add_validator(COMMIT_INTERVAL_KEY, check_commit_interval)
    engine.settings.add_validator(MIN_WRITE_KEY, check_write_interval)
    engine.settings.add_validator(MAX_WRITE_KEY, check_write_interval)
    worker = engine.workers.create("history")
    export = InfluxExport(engine.settings, engine.workers.create("history-export"), engine.clock, engine.config.data_dir, engine.alarms)
    engine.history = HistoryWriter(
        store, worker, engine.bus, engine.clock, engine.settings, engine.equipments, engine.alarms,
        storage_full=lambda: engine.storage.write_failed(), split=engine.tariff.split, export=export,
    )  # fmt: skip
    engine.history_jobs = TierJobs(store, worker, engine.clock)


def start(engine) -> None:  # noqa: ANN001
    engine.history.start()
    engine.history_jobs.start()
    engine.history.export.start()


def stop(engine) -> None:  # noqa: ANN001
    engine.history.stop()
    engine.history_jobs.stop()
    engine.history.export.stop()


def checkpoint(engine) -> None:  # noqa: ANN001
    """In the history worker, so no other history write runs meanwhile: commit, then move every
    point into the store; a store that refuses them (a full disk) fails the checkpoint."""
    writer = engine.history

    def job() -> None:
        writer.commit()
        writer.flush()
        if writer.pending or writer.store.pending:
            raise ServiceUnavailable("History points could not be written to the store (see the alarms)")

    engine.workers.get("history").run_and_wait(job)


def final_write(engine) -> None:  # noqa: ANN001
    engine.history.final_write()  # the points not yet committed, handed to the export's disk queue
    engine.history.export.final_write()
    engine.history.store.close()


COMPONENT = Component(
    name="history",
    requires=("equipments", "system", "energy"),
    routes="hausbox.history.routes",
    backup_files=(FILE_NAME, JOURNAL_NAME),  # the export queue is not: a restore must not resend old points
    setup=setup,
    start=start,
    stop=stop,
    final_write=final_write,
    checkpoint=checkpoint,
)
