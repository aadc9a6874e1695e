"""Version polling: which release is the latest, read from a release feed (digest §13).

The feed is a URL (the setting ``system.update.feedUrl``, else ``HAUSBOX_RELEASE_FEED``) answering
JSON in either shape:

- hausbox's own: ``{"version": "1.2.0", "releaseUrl": "...", "notes": "...",
  "artifact": {"url": "...", "sha256": "<hex>", "size": <bytes>}}`` (a leading ``v`` is stripped, an
  artifact URL may be relative to the feed);
- GitHub's ``releases/latest``: ``tag_name``, ``html_url``, ``body`` and, for the artifact, the
  asset named ``*-wheelhouse.zip`` with its ``size`` and ``digest`` (``sha256:<hex>``).

Polled 10 s after start, then hourly, in a worker (a slow feed never holds a request); the poll is
outbound, so it is held while the outbound gate is closed (shadow mode, an inert instance). A newer
semver than the running one emits ``system.update.available`` once per new latest version.
A feed that fails is logged and reported (``lastError``), never raised to a caller.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Callable
from urllib.parse import urljoin

import gevent
from gevent.event import Event as Flag

from hausbox import __version__
from hausbox.core.clock import iso_utc
from hausbox.core.errors import TooManyRequests
from hausbox.system import deployment, events

log = logging.getLogger("hausbox.versions")

POLL_EVERY_S = 3600.0
CHECK_INTERVAL_S = 10.0  # digest: a forced check within 10 s of the last one is a 429
FEED_TIMEOUT_S = (5.0, 10.0)
MAX_FEED_BYTES = 1 << 20
FEED_SETTING = "system.update.feedUrl"
SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def parse_semver(text: str) -> tuple[Any, ...]:
    """A sortable key for a semver (a pre-release sorts before its release); ValueError otherwise."""
    match = SEMVER.match(text.strip().removeprefix("v"))
    if not match:
        raise ValueError(f"not a semantic version: {text[:80]!r}")
    major, minor, patch, pre = match.groups()
    # Pre-release identifiers: numbers before words, compared by value (semver 2.0.0, rule 11).
    pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
    return (int(major), int(minor), int(patch), 0 if pre else 1, pre_key)


def is_newer(candidate: str, current: str) -> bool:
    return parse_semver(candidate) > parse_semver(current)


def _artifact(value: Any, base_url: str) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    url, sha, size = value.get("url"), str(value.get("sha256", "")).lower(), value.get("size")
    if not isinstance(url, str) or not re.fullmatch(r"[0-9a-f]{64}", sha) or not isinstance(size, int) or size <= 0:
        raise ValueError("artifact needs url, sha256 (64 hex digits) and size (bytes)")
    return {"url": urljoin(base_url, url), "sha256": sha, "size": size}


def _github_artifact(assets: Any, base_url: str) -> dict[str, Any] | None:
    for asset in assets if isinstance(assets, list) else []:
        if isinstance(asset, dict) and str(asset.get("name", "")).endswith("-wheelhouse.zip"):
            digest = str(asset.get("digest") or "")
            sha = digest.removeprefix("sha256:") if digest.startswith("sha256:") else ""
            return _artifact({"url": asset.get("browser_download_url"), "sha256": sha, "size": asset.get("size")}, base_url)
    return None


def parse_feed(body: Any, feed_url: str) -> dict[str, Any]:
    """``{version, releaseUrl, notes, artifact|None}`` from either feed shape; ValueError otherwise."""
    if not isinstance(body, dict):
        raise ValueError("the feed is not a JSON object")
    if "version" in body:
        version, url, notes, artifact = body["version"], body.get("releaseUrl"), body.get("notes"), _artifact(body.get("artifact"), feed_url)
    elif "tag_name" in body:
        version, url, notes, artifact = body["tag_name"], body.get("html_url"), body.get("body"), _github_artifact(body.get("assets"), feed_url)
    else:
        raise ValueError("the feed has neither version nor tag_name")
    if not isinstance(version, str):
        raise ValueError("the feed's version is not text")
    version = version.strip().removeprefix("v")
    parse_semver(version)
    return {
        "version": version,
        "releaseUrl": url if isinstance(url, str) else None,
        "notes": notes[:20000] if isinstance(notes, str) else None,
        "artifact": artifact,
    }


def fetch_feed(url: str) -> dict[str, Any]:
    """GET and parse the feed; ValueError with a short reason on any failure."""
    if not url.lower().startswith(("http://", "https://")):
        raise ValueError("the feed URL must be http or https")
    import requests

    try:
        with requests.get(url, timeout=FEED_TIMEOUT_S, stream=True, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                raise ValueError(f"the feed answered {response.status_code}")
            body = response.raw.read(MAX_FEED_BYTES + 1, decode_content=True)
    except requests.RequestException as error:
        raise ValueError(f"the feed could not be reached ({error.__class__.__name__})") from None
    if len(body) > MAX_FEED_BYTES:
        raise ValueError(f"the feed is larger than {MAX_FEED_BYTES} bytes")
    try:
        return parse_feed(json.loads(body), url)
    except ValueError as error:
        raise ValueError(f"the feed is not a release: {error}") from None


class VersionChecker:
    """The latest release known, polled on a schedule and on demand (``check``)."""

    def __init__(self, engine: Any, current: str = __version__):
        self.current = current
        self._engine = engine
        self._worker = engine.workers.create("versions", capacity=4)
        self.latest: dict[str, Any] | None = None
        self.last_check_ms: int | None = None
        self.last_error: str | None = None
        self._announced: str | None = None
        self._last_forced: float | None = None
        self._timer: Any = None
        self.deployment = deployment.describe()  # dockerAvailable, composeManaged: fixed for the process

    # ---- configuration -----------------------------------------------------------------------
    def feed_url(self) -> str:
        return str(self._engine.settings.get(FEED_SETTING) or self._engine.config.release_feed or "").strip()

    @property
    def held(self) -> list[str]:
        return self._engine.workers.gate.reasons

    # ---- schedule ----------------------------------------------------------------------------
    def start(self) -> None:
        self._timer = self._engine.clock.call_later(self._engine.config.version_first_poll_s, self._scheduled)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _scheduled(self) -> None:
        self._worker.submit_outbound(self.poll)
        self._timer = self._engine.clock.call_later(POLL_EVERY_S, self._scheduled)

    def check(self, wait_s: float = 20.0) -> None:
        """A forced poll (``POST /system/version/check``): 429 within 10 s of the last one.

        Runs in the worker like the scheduled ones and waits for it; held (not run) while the
        outbound gate is closed.
        """
        now = gevent.get_hub().loop.now()
        if self._last_forced is not None and now - self._last_forced < CHECK_INTERVAL_S:
            wait = max(1, int(CHECK_INTERVAL_S - (now - self._last_forced) + 0.999))
            raise TooManyRequests(f"a version check ran less than {int(CHECK_INTERVAL_S)} s ago", retry_after_s=wait)
        self._last_forced = now
        if self.held:
            return
        done = Flag()
        self._worker.submit_outbound(self._then(self.poll, done.set))
        done.wait(wait_s)

    @staticmethod
    def _then(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
        def both() -> None:
            try:
                first()
            finally:
                second()

        return both

    # ---- the poll ----------------------------------------------------------------------------
    def poll(self) -> None:
        # lastCheck is stamped when the check has finished, so a reader never sees a check time
        # beside the answer of the check before it (the fetch runs in a thread and takes a while).
        try:
            self._check()
        finally:
            self.last_check_ms = self._engine.clock.now_ms()

    def _check(self) -> None:
        url = self.feed_url()
        if not url:
            self.last_error = "no release feed configured (HAUSBOX_RELEASE_FEED or the setting system.update.feedUrl)"
            return
        try:
            self.latest = fetch_feed(url)
        except ValueError as error:
            self.last_error = str(error)
            log.warning("version check failed: %s", error)
            return
        self.last_error = None
        version = self.latest["version"]
        if is_newer(version, self.current) and version != self._announced:
            self._announced = version
            log.info("hausbox %s is available (running %s)", version, self.current)
            self._engine.bus.emit(events.UPDATE_AVAILABLE, current=self.current, latest=version, releaseUrl=self.latest["releaseUrl"])

    # ---- what GET /system/version tells ------------------------------------------------------
    def newer_release(self) -> dict[str, Any] | None:
        if self.latest is not None and is_newer(self.latest["version"], self.current):
            return self.latest
        return None

    def json(self) -> dict[str, Any]:
        latest = self.latest
        return {
            "current": self.current,
            "latest": latest["version"] if latest else None,
            "updateAvailable": self.newer_release() is not None,
            "releaseUrl": latest["releaseUrl"] if latest else None,
            "notes": latest["notes"] if latest else None,
            "feedUrl": self.feed_url() or None,
            "lastCheck": iso_utc(self.last_check_ms),
            "lastError": self.last_error,
            "held": self.held,
            **self.deployment,
        }
