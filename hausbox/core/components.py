"""The component contract: what one domain folder contributes to the engine, declared in one place.

Every package ``hausbox/<domain>/`` with a ``component.py`` holding ``COMPONENT = Component(...)``
is a component; the engine finds them (a new domain is a new folder, nothing else to edit) and
orders them by ``requires``. A component declares:

- ``entities``: a function defining its PonyORM entities on the database;
- ``migrations``: the package holding its ``NNNN_name.sql`` migrations (numbers unique across all);
- ``routes``: the module holding its ``ROUTES`` list (access comes from ``api/access.py``);
- ``events``: the event types it emits, name -> payload ``TypedDict``;
- ``backup_files``: paths under the data directory a backup must hold;
- ``backup_excludes``: its tables a backup leaves out and a restore leaves as they are (the audit
  trail: a restore must not erase the record of what was done since the backup, nor of the restore);
- ``setup(engine)``: builds its services onto the engine, in dependency order;
- the stages it takes part in, each ``hook(engine)``:

  ``start`` (starting, in dependency order, before ``system.started``); then, on stop, in reverse
  order: ``stop`` (automation and timers off: nothing new is started), the workers drain,
  ``disconnect`` (inputs and sockets closed), the workers drain again, ``final_write`` (what is
  kept in memory goes to disk), and the database closes.

And one hook on demand, ``checkpoint(engine)``: write now what the component keeps in memory and
would write later, and return once it is on disk (it may wait for a job of its worker); raise when
it cannot. A backup runs every checkpoint before it reads the data directory.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

# A hook gets the engine (typed loosely: core sits below the engine that imports it).
Hook = Callable[[Any], None]
STAGES = ("start", "stop", "disconnect", "final_write")


@dataclass(frozen=True)
class Component:
    name: str
    requires: tuple[str, ...] = ()
    entities: Callable[[Any], None] | None = None
    migrations: str | None = None
    routes: str | None = None
    events: Mapping[str, type] = field(default_factory=dict)
    backup_files: tuple[str, ...] = ()
    backup_excludes: tuple[str, ...] = ()
    setup: Hook | None = None
    start: Hook | None = None
    stop: Hook | None = None
    disconnect: Hook | None = None
    final_write: Hook | None = None
    checkpoint: Hook | None = None


def discover(package: str = "hausbox") -> list[Component]:
    """Every component under ``package``, each after the components it requires."""
    root = importlib.import_module(package)
    found: dict[str, Component] = {}
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"{package}.{info.name}.component")
        except ModuleNotFoundError as error:
            if error.name == f"{package}.{info.name}.component":
                continue  # a package without a component (core, api)
            raise
        component = module.COMPONENT
        if component.name in found:
            raise RuntimeError(f"component declared twice: {component.name}")
        found[component.name] = component
    return ordered(found)


def ordered(components: Mapping[str, Component]) -> list[Component]:
    """Dependency order (stable by name among equals); a missing or circular requirement raises."""
    result: list[Component] = []
    placed: set[str] = set()
    visiting: list[str] = []

    def place(name: str) -> None:
        if name in placed:
            return
        if name in visiting:
            raise RuntimeError(f"components require each other: {' -> '.join(visiting + [name])}")
        component = components.get(name)
        if component is None:
            raise RuntimeError(f"component {visiting[-1] if visiting else '?'} requires {name}, which does not exist")
        visiting.append(name)
        for required in component.requires:
            place(required)
        visiting.pop()
        placed.add(name)
        result.append(component)

    for name in sorted(components):
        place(name)
    return result
