"""Backup: the export, restores staged in the data directory and applied at the next start
(``apply.py``, called by the engine before the database opens), and the local backups."""

from hausbox.backup.service import Backups
from hausbox.core.components import Component


def setup(engine) -> None:  # noqa: ANN001
    engine.backups = Backups(engine)


COMPONENT = Component(
    name="backup",
    requires=("history",),
    routes="hausbox.backup.routes",
    setup=setup,
)
