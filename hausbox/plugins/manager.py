"""Installed plugins: install, update, enable, disable, uninstall, load at start, fetch what is missing.

Where things are: ``<data>/plugins/<id>/`` the unpacked plugin, ``<data>/plugins/.archives/<id>.zip``
the archive it came from, and a ``plugins`` row (version, source, the archive's sha256 and, for a
personal plugin, the sha256 the administrator approved). Every load checks first: the kept archive
still has its recorded (pinned) hash, and the folder holds exactly the archive's files; otherwise
the plugin is refused and the reason shown in its status.

Confirmations (spec, Errors): a registry plugin from a non-official owner needs ``confirmed``
(409 ``CommunityPluginConfirmationRequired``); a personal one answers 409
``PersonalPluginConfirmationRequired`` with the downloaded archive's ``{repo, owner, version,
sha256}`` until a retry carries ``confirmed`` and an ``expectedSha256`` equal to the hash of a fresh
download, which is then pinned.

Plugins are outbound: while the outbound gate is closed (shadow mode, an inert instance) none is
loaded or fetched; each shows as held. A plugin that fails (import, ``create``, ``start``, a
handler) is reported in its status; the engine and the other plugins carry on.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gevent
from pony import orm

from hausbox import __version__
from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.errors import ApiError, BadRequest, Conflict, NotFound
from hausbox.core.logs import by_actor
from hausbox.core.workers import OutboundGate, Worker
from hausbox.plugins import install, loader
from hausbox.plugins.install import Archive, check_repo, fetch, read_archive, release_url
from hausbox.plugins.registry import StoreIndex, compatibility, owner_of, trust_of

log = logging.getLogger("hausbox.plugins")

RELEASE_CACHE_S = 3600.0
OAUTH_TIMEOUT_S = 30.0


class PluginManager:
    def __init__(self, db: orm.Database, settings: Any, integrations: Any, recipes: Any, devices: Any, gate: OutboundGate, worker: Worker, data_dir: Path):
        self._db = db
        self._integrations = integrations
        self._recipes = recipes  # the RecipeManager (its registry takes recipe plugins)
        self._devices = devices
        self._gate = gate
        self._worker = worker
        self.root = data_dir / "plugins"
        self.archives = self.root / ".archives"
        self.index = StoreIndex(settings)
        self._loaded: dict[str, str] = {}  # id -> type, of the plugins whose code runs
        self._errors: dict[str, str] = {}  # id -> why it is not running
        self._fetching: set[str] = set()
        self._latest: dict[str, tuple[float, Archive]] = {}  # personal source -> its latest release

    # ---- rows ----------------------------------------------------------------------------------
    def _rows(self) -> list[dict[str, Any]]:
        with orm.db_session:
            return [r.to_dict() for r in self._db.Plugin.select().order_by(lambda p: p.id)]

    def _row(self, plugin_id: str) -> dict[str, Any]:
        with orm.db_session:
            row = self._db.Plugin.get(id=plugin_id)
            if row is None:
                raise NotFound(f"Plugin not found: {plugin_id[:200]}")
            return row.to_dict()

    # ---- start-up --------------------------------------------------------------------------------
    def start(self) -> None:
        """Load every enabled plugin (missing ones are fetched again, in the worker)."""
        for row in self._rows():
            if not row["enabled"]:
                continue
            if not self._gate.is_open:
                continue
            if self._missing(row["id"]):
                self._fetching.add(row["id"])
                self._worker.submit_outbound(self._fetch_missing, row["id"])
            else:
                self._load(row)

    def _missing(self, plugin_id: str) -> bool:
        return not (self.root / plugin_id / "__init__.py").is_file() or not self._archive_path(plugin_id).is_file()

    def _archive_path(self, plugin_id: str) -> Path:
        return self.archives / f"{plugin_id}.zip"

    def _fetch_missing(self, plugin_id: str) -> None:
        """Download a plugin whose files are gone, check it against the recorded hash, load it."""
        try:
            row = self._row(plugin_id)
            url = release_url(self.index.release_base, row["repo"], row["version"])
            archive = read_archive(fetch(url, install.MAX_ARCHIVE_BYTES, "the plugin archive"), row["repo"])
            expected = row["pinned_sha256"] or row["archive_sha256"]
            if archive.sha256 != expected:
                raise BadRequest(f"integrity check failed: the release archive's sha256 {archive.sha256} is not the pinned {expected}")
            self._write(plugin_id, archive)
            log.info("plugin %s %s fetched again (its files were missing)", plugin_id, row["version"])
        except ApiError as error:
            self._errors[plugin_id] = error.message
            log.error("plugin %s: fetching it again failed: %s", plugin_id, error.message)
            return
        except Exception as error:
            self._errors[plugin_id] = f"fetching it again failed: {error}"
            log.exception("plugin %s: fetching it again failed", plugin_id)
            return
        finally:
            self._fetching.discard(plugin_id)
        self._load(row)

    # ---- loading ---------------------------------------------------------------------------------
    def _load(self, row: dict[str, Any]) -> bool:
        plugin_id = row["id"]
        try:
            self._verify(row)
            module = loader.import_package(plugin_id, self.root / plugin_id)
            manifest = json.loads(row["manifest"])
            if row["type"] == "recipe":
                self._load_recipe(plugin_id, module)
            else:
                self._load_integration(plugin_id, module, manifest)
        except Exception as error:
            message = str(error) if isinstance(error, loader.LoadError) else f"{error.__class__.__name__}: {error}"
            self._errors[plugin_id] = message
            loader.unload(plugin_id)
            log.error("plugin %s not loaded: %s", plugin_id, message)
            return False
        self._errors.pop(plugin_id, None)
        self._loaded[plugin_id] = row["type"]
        log.info("plugin %s %s loaded", plugin_id, row["version"])
        return True

    def _verify(self, row: dict[str, Any]) -> None:
        plugin_id = row["id"]
        try:
            data = self._archive_path(plugin_id).read_bytes()
        except OSError:
            raise loader.LoadError("integrity check failed: the installed archive is missing") from None
        expected = row["pinned_sha256"] or row["archive_sha256"]
        actual = install.sha256(data)
        if actual != expected:
            raise loader.LoadError(f"integrity check failed: the installed archive's sha256 {actual} is not the pinned {expected}")
        try:
            digest = install.folder_digest(self.root / plugin_id)
        except (OSError, ValueError) as error:
            raise loader.LoadError(f"integrity check failed: {error}") from None
        if digest != read_archive(data).digest:
            raise loader.LoadError(f"integrity check failed: the files under plugins/{plugin_id} are not the archive's (changed on disk)")

    def _load_integration(self, plugin_id: str, module: Any, manifest: dict[str, Any]) -> None:
        create = getattr(module, "create", None)
        if not callable(create):
            raise loader.LoadError("an integration plugin must define create(context)")
        guard: list[loader.Guarded] = []

        def failed(where: str, error: Exception) -> None:
            if guard:
                guard[0].failed(where, error)

        def factory(context: Any) -> loader.Guarded:
            plugin = create(replace(context, bus=loader.GuardedBus(context.bus, failed)))
            guard.append(loader.Guarded(plugin, plugin_id))
            return guard[0]

        self._integrations.register(manifest, factory)
        if guard[0].is_configured():
            gevent.spawn(self._integrations.start, plugin_id)

    def _load_recipe(self, plugin_id: str, module: Any) -> None:
        create = getattr(module, "create_recipe", None)
        if not callable(create):
            raise loader.LoadError("a recipe plugin must define create_recipe()")
        recipe = create()
        if getattr(recipe, "id", None) != plugin_id:
            raise loader.LoadError(f"the recipe's id {getattr(recipe, 'id', None)!r} is not the manifest's {plugin_id}")
        try:
            self._recipes.registry.register(recipe)
        except ValueError as error:
            raise loader.LoadError(str(error)) from None

    def _unload(self, plugin_id: str) -> None:
        kind = self._loaded.pop(plugin_id, None)
        if kind == "integration":
            self._integrations.unregister(plugin_id)
        elif kind == "recipe":
            self._recipes.registry.unregister(plugin_id)
        loader.unload(plugin_id)
        self._errors.pop(plugin_id, None)

    # ---- reads -----------------------------------------------------------------------------------
    def list_json(self) -> list[dict[str, Any]]:
        rows = self._rows()
        rows.sort(key=lambda r: (r["type"] != "integration", r["id"]))  # integrations, then recipes
        return [self._json(row) for row in rows]

    def _json(self, row: dict[str, Any]) -> dict[str, Any]:
        plugin_id = row["id"]
        manifest = json.loads(row["manifest"])
        status, detail = self._status(row)
        counts = self._devices.counts(plugin_id) if row["type"] == "integration" else {"total": 0, "offline": 0}
        body: dict[str, Any] = {
            **{k: manifest[k] for k in ("author", "sowelVersion", "settings", "apiVersion") if k in manifest},
            "id": plugin_id,
            "name": manifest.get("name", plugin_id),
            "version": row["version"],
            "description": manifest.get("description", ""),
            "icon": manifest.get("icon", ""),
            "repo": row["repo"],
            "type": row["type"],
            "enabled": row["enabled"],
            "installedAt": iso_utc(row["installed_at"]),
            "source": row["source"],
            "trust": trust_of(row["repo"], row["source"] == "personal"),
            "status": status,
            "deviceCount": counts["total"],
            "offlineDeviceCount": counts["offline"],
        }
        if row["source"] == "personal":
            body["pinnedSha256"] = row["pinned_sha256"]
        latest = self._latest_version(row)
        if latest is not None:
            body["latestVersion"] = latest
        if detail:
            body["error"] = detail
        return body

    def _status(self, row: dict[str, Any]) -> tuple[str, str | None]:
        plugin_id = row["id"]
        if not row["enabled"]:
            return "disabled", None
        if plugin_id in self._errors:
            return "error", self._errors[plugin_id]
        if plugin_id in self._fetching:
            return "disconnected", "downloading again (its files were missing)"
        if plugin_id not in self._loaded:
            return "disconnected", self._gate.held_detail or None
        if row["type"] == "recipe":
            return "connected", None
        plugin = self._integrations.get(plugin_id)
        status = self._integrations.status(plugin_id)
        return status, (plugin.status_detail() if status != "connected" else None)

    def _latest_version(self, row: dict[str, Any]) -> str | None:
        if row["source"] == "registry":
            entry = self.index.find(row["repo"]) if self.index.cached else None
            return entry["version"] if entry else None
        cached = self._latest.get(row["repo"].lower())
        return cached[1].manifest["version"] if cached else None

    def store_json(self) -> list[dict[str, Any]]:
        """Registry plugins, then personal sources' latest releases, not installed, with trust and compatibility."""
        installed = {row["id"] for row in self._rows()}
        listed: list[dict[str, Any]] = []
        registry_repos = set()
        for entry in self.index.entries():
            registry_repos.add(entry["repo"].lower())
            if entry["id"] not in installed:
                listed.append(self._store_item(entry, trust_of(entry["repo"], False)))
        for source in self.sources_json():
            repo = source["repo"]
            if repo.lower() in registry_repos:
                continue
            try:
                manifest = self._personal_latest(repo).manifest
            except ApiError as error:
                listed.append({"repo": repo, "owner": owner_of(repo), "trust": "personal", "compatible": False, "error": error.message})
                continue
            if manifest["id"] not in installed:
                listed.append(self._store_item({**manifest, "repo": repo}, "personal"))
        return listed

    def _store_item(self, entry: dict[str, Any], trust: str) -> dict[str, Any]:
        compatible, reason = compatibility(entry.get("sowelVersion"), __version__)
        item = {
            "id": entry["id"], "name": entry.get("name", entry["id"]), "version": entry["version"],
            "description": entry.get("description", ""), "icon": entry.get("icon", ""),
            "author": entry.get("author") or owner_of(entry["repo"]), "repo": entry["repo"], "owner": owner_of(entry["repo"]),
            "type": entry.get("type", "integration"), "sowelVersion": entry.get("sowelVersion"), "tags": entry.get("tags", []),
            "trust": trust, "compatible": compatible,
        }  # fmt: skip
        if reason:
            item["compatReason"] = reason
        return item

    def refresh(self) -> dict[str, Any]:
        self._latest.clear()
        return self.index.refresh()

    def _personal_latest(self, repo: str) -> Archive:
        cached = self._latest.get(repo.lower())
        if cached and time.monotonic() - cached[0] < RELEASE_CACHE_S:
            return cached[1]
        archive = self._download(repo, None)
        self._latest[repo.lower()] = (time.monotonic(), archive)
        return archive

    def _download(self, repo: str, version: str | None) -> Archive:
        url = release_url(self.index.release_base, repo, version)
        return read_archive(fetch(url, install.MAX_ARCHIVE_BYTES, "the plugin archive"), repo)

    # ---- personal sources ------------------------------------------------------------------------
    def sources_json(self) -> list[dict[str, Any]]:
        with orm.db_session:
            rows = self._db.PluginSource.select().order_by(lambda s: s.added_at)
            return [{"repo": s.repo, "addedAt": iso_utc(s.added_at)} for s in rows]

    def _is_source(self, repo: str) -> bool:
        return any(s["repo"].lower() == repo.lower() for s in self.sources_json())

    def add_source(self, repo: Any, by: str | None = None) -> dict[str, Any]:
        repo = check_repo(repo)
        if self._is_source(repo):
            raise Conflict(f"{repo} is already a personal source")
        stamp = now_ms()
        with orm.db_session:
            self._db.PluginSource(repo=repo, added_at=stamp)
        log.info("personal plugin source %s added%s", repo, by_actor(by))
        return {"repo": repo, "addedAt": iso_utc(stamp)}

    def remove_source(self, repo: str, by: str | None = None) -> None:
        repo = repo.strip()
        with orm.db_session:
            rows = [s for s in self._db.PluginSource.select() if s.repo.lower() == repo.lower()]
            if not rows:
                raise NotFound(f"Personal source not found: {repo[:200]}")
            for row in rows:
                row.delete()
        self._latest.pop(repo.lower(), None)
        log.info("personal plugin source %s removed%s", repo, by_actor(by))

    # ---- install and update ------------------------------------------------------------------------
    def _obtain(self, repo: str, personal: bool, version: str | None, confirmed: bool, expected: str | None) -> Archive:
        """A fresh download of ``repo``'s archive once every confirmation the spec asks is given."""
        trust = trust_of(repo, personal)
        if trust == "community" and not confirmed:
            raise Conflict(f"{repo} is published by {owner_of(repo)}, not an official owner: confirm to install it",
                           code="CommunityPluginConfirmationRequired", repo=repo, owner=owner_of(repo))  # fmt: skip
        archive = self._download(repo, version)
        if personal and (not confirmed or expected is None or expected.lower() != archive.sha256):
            why = "the downloaded archive is not the approved one" if expected is not None else "confirm this archive's sha256 to install it"
            raise Conflict(f"{repo} is a personal source: {why}", code="PersonalPluginConfirmationRequired",
                           repo=repo, owner=owner_of(repo), version=archive.manifest["version"], sha256=archive.sha256)  # fmt: skip
        compatible, reason = compatibility(archive.manifest.get("sowelVersion"), __version__)
        if not compatible:
            raise BadRequest(f"{archive.manifest['id']} is not compatible: {reason}")
        return archive

    def _origin(self, repo: str) -> tuple[dict[str, Any] | None, bool]:
        entry = self.index.find(repo)
        if entry is not None:
            return entry, False
        if self._is_source(repo):
            return None, True
        raise NotFound(f"{repo} is neither in the plugin registry nor a personal source")

    def install(self, repo: Any, confirmed: bool = False, expected: str | None = None, by: str | None = None) -> dict[str, Any]:
        repo = check_repo(repo)
        entry, personal = self._origin(repo)
        if entry is not None:
            if any(r["id"] == entry["id"] for r in self._rows()):
                raise Conflict(f"Plugin {entry['id']} is already installed: update it instead")
            compatible, reason = compatibility(entry.get("sowelVersion"), __version__)
            if not compatible:
                raise BadRequest(f"{entry['id']} is not compatible: {reason}")
        archive = self._obtain(repo, personal, entry["version"] if entry else None, confirmed, expected)
        manifest = archive.manifest
        plugin_id = manifest["id"]
        if entry is not None and plugin_id != entry["id"]:
            raise BadRequest(f"the archive's id {plugin_id} is not the registry's {entry['id']}")
        if any(r["id"] == plugin_id for r in self._rows()):
            raise Conflict(f"Plugin {plugin_id} is already installed: update it instead")
        if self._integrations.get(plugin_id) is not None or self._recipes.registry.get(plugin_id) is not None:
            raise Conflict(f"{plugin_id} is the id of a built-in {manifest['type']}")
        self._write(plugin_id, archive)
        stamp = now_ms()
        with orm.db_session:
            self._db.Plugin(
                id=plugin_id, repo=repo, version=manifest["version"], type=manifest["type"], source="personal" if personal else "registry",
                manifest=json.dumps(manifest), archive_sha256=archive.sha256, pinned_sha256=archive.sha256 if personal else None,
                enabled=True, installed_at=stamp, updated_at=stamp,
            )  # fmt: skip
        log.info("plugin %s %s installed from %s%s", plugin_id, manifest["version"], repo, by_actor(by))
        if self._gate.is_open:
            self._load(self._row(plugin_id))
        return {"success": True, "manifest": manifest, "plugin": self._json(self._row(plugin_id))}

    def update(self, plugin_id: str, confirmed: bool = False, expected: str | None = None, by: str | None = None) -> dict[str, Any]:
        row = self._row(plugin_id)
        personal = row["source"] == "personal"
        version = None
        if not personal:
            entry = self.index.find(row["repo"])
            if entry is None:
                raise NotFound(f"{row['repo']} is no longer in the plugin registry")
            version = entry["version"]
        archive = self._obtain(row["repo"], personal, version, confirmed, expected)
        manifest = archive.manifest
        if manifest["id"] != plugin_id or manifest["type"] != row["type"]:
            raise BadRequest(f"the new archive is {manifest['type']} {manifest['id']}, not {row['type']} {plugin_id}")
        self._unload(plugin_id)
        self._write(plugin_id, archive)
        with orm.db_session:
            stored = self._db.Plugin[plugin_id]
            stored.version, stored.manifest, stored.archive_sha256, stored.updated_at = manifest["version"], json.dumps(manifest), archive.sha256, now_ms()
            if personal:
                stored.pinned_sha256 = archive.sha256
        log.info("plugin %s updated from %s to %s%s", plugin_id, row["version"], manifest["version"], by_actor(by))
        row = self._row(plugin_id)
        if row["enabled"] and self._gate.is_open:
            self._load(row)
        return {"success": True, "manifest": manifest, "plugin": self._json(row)}

    def _write(self, plugin_id: str, archive: Archive) -> None:
        """The unpacked folder and the kept archive, each replaced whole."""
        target = self.root / plugin_id
        fresh = self.root / f".new-{plugin_id}-{uuid.uuid4().hex}"
        install.unpack(archive, fresh)
        self.archives.mkdir(parents=True, exist_ok=True)
        kept = self.archives / f".{plugin_id}-{uuid.uuid4().hex}.zip"
        kept.write_bytes(archive.data)
        old = self.root / f".old-{plugin_id}-{uuid.uuid4().hex}"
        if target.exists() or target.is_symlink():
            os.rename(target, old)
        os.rename(fresh, target)
        os.replace(kept, self._archive_path(plugin_id))
        shutil.rmtree(old, ignore_errors=True)

    # ---- enable, disable, uninstall ------------------------------------------------------------------
    def _set_enabled(self, plugin_id: str, enabled: bool) -> None:
        with orm.db_session:
            row = self._db.Plugin.get(id=plugin_id)
            if row is None:
                raise NotFound(f"Plugin not found: {plugin_id[:200]}")
            row.enabled, row.updated_at = enabled, now_ms()

    def enable(self, plugin_id: str, by: str | None = None) -> dict[str, Any]:
        self._set_enabled(plugin_id, True)
        log.info("plugin %s enabled%s", plugin_id, by_actor(by))
        row = self._row(plugin_id)
        if plugin_id not in self._loaded and self._gate.is_open:
            if self._missing(plugin_id):
                self._fetching.add(plugin_id)
                self._worker.submit_outbound(self._fetch_missing, plugin_id)
            else:
                self._load(row)
        return {"success": True, "plugin": self._json(row)}

    def disable(self, plugin_id: str, by: str | None = None) -> dict[str, Any]:
        self._set_enabled(plugin_id, False)
        self._unload(plugin_id)
        log.info("plugin %s disabled%s", plugin_id, by_actor(by))
        return {"success": True, "plugin": self._json(self._row(plugin_id))}

    def uninstall(self, plugin_id: str, by: str | None = None) -> dict[str, Any]:
        self._row(plugin_id)
        self._unload(plugin_id)
        with orm.db_session:
            self._db.Plugin[plugin_id].delete()
        shutil.rmtree(self.root / plugin_id, ignore_errors=True)
        self._archive_path(plugin_id).unlink(missing_ok=True)
        log.info("plugin %s uninstalled%s", plugin_id, by_actor(by))
        return {"success": True}

    # ---- OAuth -----------------------------------------------------------------------------------
    def oauth_callback(self, plugin_id: str, query: dict[str, str]) -> str:
        """Hand the provider's redirect to the plugin (it checks its own ``state``); the page to go to."""
        plugin = self._integrations.get(plugin_id) if self._loaded.get(plugin_id) == "integration" else None
        handler = getattr(plugin, "handle_oauth_callback", None)
        if handler is None:
            raise NotFound(f"No plugin {plugin_id[:200]} takes an OAuth callback")
        try:
            with gevent.Timeout(OAUTH_TIMEOUT_S, TimeoutError("the plugin did not answer in time")):
                handler(query)
        except Exception as error:
            log.warning("plugin %s refused an OAuth callback: %s", plugin_id, error)
            return "/settings/integrations?oauth_error=" + quote(str(error)[:200] or error.__class__.__name__)
        return "/settings/integrations?oauth_success=1"
