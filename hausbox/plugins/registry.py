"""The plugin store's index: a JSON array at ``plugins.registryUrl``, cached an hour.

When the URL cannot be read (or does not hold a list), the copy shipped in the package
(``hausbox/plugins/registry.json``) stands in, for the same hour. ``refresh()`` forgets the cache.
An entry is ``{id, type, name, description, icon, author, repo, version, tags, sowelVersion, i18n?}``;
entries without a valid id, repo or version are left out.

Trust tiers: a registry plugin whose repo's owner is official (``OFFICIAL_OWNERS``) is
``official``, any other registry plugin ``community``; a plugin from a personal source is
``personal``. Compatibility: ``sowelVersion`` (the spec's name for the minimum engine version,
``1.2.0`` or ``>=1.2.0``) is compared number by number with ours.
"""

from __future__ import annotations

import json
import logging
import re
import time
from importlib import resources
from typing import Any

from hausbox.core.settings import SettingsStore
from hausbox.core.errors import BadRequest
from hausbox.plugins.install import REPO, DownloadError, fetch
from hausbox.sdk.manifest import _ID, _SEMVER

log = logging.getLogger("hausbox.plugins")

REGISTRY_URL_KEY = "plugins.registryUrl"
RELEASE_BASE_KEY = "plugins.releaseBaseUrl"
DEFAULT_REGISTRY_URL = "https://raw.githubusercontent.com/hausbox/plugins/main/registry.json"
DEFAULT_RELEASE_BASE = "https://github.com"
OFFICIAL_OWNERS = frozenset({"hausbox"})
CACHE_S = 3600.0
MAX_INDEX_BYTES = 2 << 20
_VERSION = re.compile(r"^\s*(?:>=)?\s*v?(\d+(?:\.\d+)*)")


def owner_of(repo: str) -> str:
    return repo.split("/", 1)[0]


def trust_of(repo: str, personal: bool) -> str:
    if personal:
        return "personal"
    return "official" if owner_of(repo).lower() in OFFICIAL_OWNERS else "community"


def _numbers(version: str) -> tuple[int, ...] | None:
    match = _VERSION.match(version or "")
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def compatibility(required: Any, ours: str) -> tuple[bool, str | None]:
    """``(compatible, reason)`` of a plugin asking ``sowelVersion`` = ``required`` with our version."""
    if required in (None, ""):
        return True, None
    wanted = _numbers(required) if isinstance(required, str) else None
    if wanted is None:
        return False, f"sowelVersion {str(required)[:50]} is not a version"
    mine = _numbers(ours) or (0,)
    width = max(len(wanted), len(mine))
    if mine + (0,) * (width - len(mine)) >= wanted + (0,) * (width - len(wanted)):
        return True, None
    return False, f"needs engine version {'.'.join(map(str, wanted))} or later (this is {ours})"


def check_url(key: str, value: Any) -> None:
    if not isinstance(value, str) or not value.lower().startswith(("http://", "https://")):
        raise ValueError("must be an http or https URL")


class StoreIndex:
    def __init__(self, settings: SettingsStore):
        self._settings = settings
        self._entries: list[dict[str, Any]] | None = None
        self._source = "local"
        self._fetched_at = 0.0
        self._url: str | None = None
        settings.add_validator(REGISTRY_URL_KEY, lambda value: check_url(REGISTRY_URL_KEY, value))
        settings.add_validator(RELEASE_BASE_KEY, lambda value: check_url(RELEASE_BASE_KEY, value))

    @property
    def url(self) -> str:
        return str(self._settings.get(REGISTRY_URL_KEY) or DEFAULT_REGISTRY_URL)

    @property
    def release_base(self) -> str:
        return str(self._settings.get(RELEASE_BASE_KEY) or DEFAULT_RELEASE_BASE)

    @property
    def cached(self) -> bool:
        """Whether the index was read (a listing of installed plugins does not fetch it)."""
        return self._entries is not None

    def entries(self) -> list[dict[str, Any]]:
        url = self.url
        if self._entries is None or url != self._url or time.monotonic() - self._fetched_at > CACHE_S:
            self._load(url)
        return self._entries or []

    def refresh(self) -> dict[str, Any]:
        self._load(self.url)
        return {"count": len(self._entries or []), "source": self._source}

    def find(self, repo: str) -> dict[str, Any] | None:
        wanted = repo.lower()
        return next((e for e in self.entries() if e["repo"].lower() == wanted), None)

    def find_id(self, plugin_id: str) -> dict[str, Any] | None:
        return next((e for e in self.entries() if e["id"] == plugin_id), None)

    def _load(self, url: str) -> None:
        entries: list[dict[str, Any]] | None = None
        try:
            entries = _valid(json.loads(fetch(url, MAX_INDEX_BYTES, "the plugin registry")))
            self._source = "remote"
        except (DownloadError, BadRequest, ValueError) as error:
            log.warning("plugin registry %s unreadable (%s): using the shipped copy", url, getattr(error, "message", error))
        if entries is None:
            shipped = resources.files(__package__).joinpath("registry.json").read_text(encoding="utf-8")
            entries = _valid(json.loads(shipped)) or []
            self._source = "local"
        self._entries, self._url, self._fetched_at = entries, url, time.monotonic()


def _valid(index: Any) -> list[dict[str, Any]] | None:
    if not isinstance(index, list):
        return None
    kept = []
    for entry in index:
        if not isinstance(entry, dict):
            continue
        try:
            if not (_ID.match(entry["id"]) and _SEMVER.match(entry["version"]) and isinstance(entry["repo"], str)):
                continue
        except (KeyError, TypeError):
            continue
        if not REPO.match(entry["repo"]):
            continue
        kind = entry.get("type", "integration")
        if kind not in ("integration", "recipe"):
            continue
        kept.append(
            {
                "id": entry["id"],
                "type": kind,
                "name": str(entry.get("name") or entry["id"]),
                "description": str(entry.get("description") or ""),
                "icon": str(entry.get("icon") or "puzzle"),
                "author": str(entry.get("author") or owner_of(entry["repo"])),
                "repo": entry["repo"],
                "version": entry["version"],
                "tags": [t for t in entry.get("tags", []) if isinstance(t, str)] if isinstance(entry.get("tags"), list) else [],
                "sowelVersion": entry.get("sowelVersion") if isinstance(entry.get("sowelVersion"), str) else None,
                **({"i18n": entry["i18n"]} if isinstance(entry.get("i18n"), dict) else {}),
            }
        )
    return kept
