"""The plugin manifest (``manifest.json`` beside a plugin's code) and a plugin's texts (``texts/<lang>.json``).

A manifest holds ``id``, ``name``, ``version`` (semver), ``description``, ``icon``, ``type``
(``integration`` or ``recipe``, default ``integration``) and optionally ``apiVersion``, ``author``,
``repo``, ``sowelVersion`` (the minimum engine version, the spec's name) and ``settings``.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

KINDS = ("integration", "recipe")
LANGUAGES = ("en", "fr")
_SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
_ID = re.compile(r"^[a-z0-9]+([-_][a-z0-9]+)*$")


class ManifestError(ValueError):
    pass


def check_manifest(manifest: Any, where: str = "manifest") -> dict[str, Any]:
    """The manifest with its defaults, or ManifestError naming what is wrong."""
    if not isinstance(manifest, dict):
        raise ManifestError(f"{where}: not a JSON object")
    for key in ("id", "name", "version", "description", "icon"):
        if not isinstance(manifest.get(key), str) or not manifest[key].strip():
            raise ManifestError(f"{where}: {key} is required (text)")
    if not _ID.match(manifest["id"]):
        raise ManifestError(f"{where}: id must be lower-case words joined by - or _")
    if not _SEMVER.match(manifest["version"]):
        raise ManifestError(f"{where}: version must be semver (1.2.3)")
    kind = manifest.get("type", "integration")
    if kind not in KINDS:
        raise ManifestError(f"{where}: type must be one of {', '.join(KINDS)}")
    if "apiVersion" in manifest and (not isinstance(manifest["apiVersion"], int) or isinstance(manifest["apiVersion"], bool)):
        raise ManifestError(f"{where}: apiVersion must be an integer")
    return {**manifest, "type": kind}


def builtin_manifests(package: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """``(module name, manifest)`` of every plugin folder of ``package`` whose manifest is of ``kind``."""
    found = []
    for folder in sorted(resources.files(package).iterdir(), key=lambda f: f.name):
        manifest_file = folder / "manifest.json"
        if folder.is_dir() and manifest_file.is_file():
            manifest = check_manifest(json.loads(manifest_file.read_text(encoding="utf-8")), f"{package}.{folder.name}")
            if manifest["type"] == kind:
                found.append((f"{package}.{folder.name}", manifest))
    return found


def load_texts(package: str) -> dict[str, dict[str, Any]]:
    """A plugin's texts, one file per language: ``{"en": {...}, "fr": {...}}`` from ``texts/<lang>.json``."""
    folder = resources.files(package) / "texts"
    return {lang: json.loads((folder / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGUAGES}
