"""The audit trail: the recorder the HTTP layer hands each mutating request to, its worker and route."""

from hausbox.audit.trail import AuditTrail
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    from hausbox.engine import DATABASE_FILE  # the engine module is loaded by now: it runs this

    engine.audit = AuditTrail(engine.config.data_dir / DATABASE_FILE, engine.workers.create("audit"), engine.clock, engine.alarms)


COMPONENT = Component(
    name="audit",
    migrations="hausbox.audit.migrations",
    routes="hausbox.audit.routes",
    # A restore must not erase the record of what was done since the backup, nor of the restore.
    backup_excludes=("audit_entries",),
    setup=setup,
    start=lambda engine: engine.audit.start(),  # retention, then daily
    stop=lambda engine: engine.audit.stop(),
    final_write=lambda engine: engine.audit.final_write(),
)
