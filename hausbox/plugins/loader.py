"""Loading an installed plugin's code from its folder under the data directory.

The folder (``<data>/plugins/<id>/``) is never on ``sys.path``: its package is imported under a
name of its own (``hausbox_plugin_<id>``) from that folder only, and removed from ``sys.modules``
when the plugin is unloaded. Before anything is imported, every ``.py`` file is read: importing
any part of hausbox other than ``hausbox.sdk`` (the plugin API) refuses the plugin. This is a
check of what the plugin declares, not a sandbox: Python code runs with the engine's rights.

An integration is wrapped (``Guarded``) so that an exception in any of its methods is reported in
its status, never raised into the registry, the routes or another plugin.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("hausbox.plugins")

ALLOWED = "hausbox.sdk"


class LoadError(Exception):
    """The plugin cannot be loaded (its message is shown in the plugin's status)."""


def module_name(plugin_id: str) -> str:
    return "hausbox_plugin_" + plugin_id.replace("-", "_")


def check_imports(folder: Path) -> None:
    """LoadError when a file imports hausbox beyond the SDK (or does not parse)."""
    for path in sorted(folder.rglob("*.py")):
        where = path.relative_to(folder).as_posix()
        try:
            tree = ast.parse(path.read_bytes(), filename=where)
        except (SyntaxError, ValueError) as error:
            raise LoadError(f"{where}: {error}") from None
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] if node.module != "hausbox" else [f"hausbox.{a.name}" for a in node.names]
            for name in names:
                if (name == "hausbox" or name.startswith("hausbox.")) and name != ALLOWED:
                    raise LoadError(f"{where} imports {name}: a plugin may use only {ALLOWED}")


def import_package(plugin_id: str, folder: Path) -> Any:
    """Import the plugin's package from ``folder`` (its ``__init__.py``); LoadError on failure."""
    check_imports(folder)
    name = module_name(plugin_id)
    unload(plugin_id)
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise LoadError("no __init__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # nothing is added to the checked folder
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        unload(plugin_id)
        raise LoadError(f"import failed: {error.__class__.__name__}: {error}") from error
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def unload(plugin_id: str) -> None:
    name = module_name(plugin_id)
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


class Guarded:
    """An integration plugin behind a guard: its exceptions become its status, never the caller's."""

    def __init__(self, plugin: Any, plugin_id: str):
        self._plugin = plugin
        self._id = plugin_id
        self.error: str | None = None
        for attr in ("id", "name", "description", "icon", "api_version"):
            setattr(self, attr, getattr(plugin, attr, plugin_id if attr in ("id", "name") else (2 if attr == "api_version" else "")))
        self.id = plugin_id  # the manifest's id is the one the engine knows
        for optional in ("refresh", "polling_info", "handle_oauth_callback", "oauth_url"):
            if callable(getattr(plugin, optional, None)):
                setattr(self, optional, self._wrapped(optional))

    def failed(self, where: str, error: Exception) -> None:
        self.error = f"{where} failed: {error.__class__.__name__}: {error}"
        log.error("plugin %s: %s", self._id, self.error, exc_info=error)

    def _wrapped(self, name: str) -> Any:
        method = getattr(self._plugin, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except Exception as error:
                if name == "handle_oauth_callback":
                    raise  # the callback's refusal is its answer
                self.failed(name, error)
                raise
        return call

    def settings_schema(self) -> list[Any]:
        try:
            return list(self._plugin.settings_schema())
        except Exception as error:
            self.failed("settings_schema", error)
            return []

    def is_configured(self) -> bool:
        try:
            return bool(self._plugin.is_configured())
        except Exception as error:
            self.failed("is_configured", error)
            return False

    def start(self) -> None:
        self.error = None
        try:
            self._plugin.start()
        except Exception as error:
            self.failed("start", error)
            raise

    def stop(self) -> None:
        try:
            self._plugin.stop()
        except Exception as error:
            self.failed("stop", error)

    def status(self) -> str:
        if self.error is not None:
            return "error"
        try:
            status = self._plugin.status()
        except Exception as error:
            self.failed("status", error)
            return "error"
        return status if status in ("connected", "disconnected", "error", "not_configured") else "error"

    def status_detail(self) -> str | None:
        if self.error is not None:
            return self.error
        detail_of = getattr(self._plugin, "status_detail", None)
        if detail_of is None:
            return None
        try:
            detail = detail_of()
            return None if detail is None else str(detail)
        except Exception as error:
            self.failed("status_detail", error)
            return self.error

    def execute_order(self, device: Any, order_key: Any, value: Any) -> None:
        self._plugin.execute_order(device, order_key, value)  # the registry reports a failed order


class GuardedBus:
    """The bus as a plugin sees it: a handler of the plugin that raises is reported in its status."""

    def __init__(self, bus: Any, on_failure: Any):
        self._bus = bus
        self._on_failure = on_failure

    def _guard(self, handler: Any, what: str) -> Any:
        def guarded(event: Any) -> None:
            try:
                handler(event)
            except Exception as error:
                self._on_failure(f"handler for {what}", error)
        return guarded

    def on(self, event_type: str, handler: Any) -> Any:
        return self._bus.on(event_type, self._guard(handler, event_type))

    def on_any(self, handler: Any) -> Any:
        return self._bus.on_any(self._guard(handler, "every event"))

    def emit(self, event_type: str, **payload: Any) -> Any:
        return self._bus.emit(event_type, **payload)
