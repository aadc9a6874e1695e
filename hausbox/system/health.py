"""``GET /health``: liveness for anyone, details for an authenticated caller."""

from __future__ import annotations

import time
from typing import Any, Callable

from hausbox import __version__

# A contributor adds named sections (e.g. "integrations", "devices") to the authenticated form.
Contributor = Callable[[], dict[str, Any]]


def human_duration(ms: int) -> str:
    seconds = ms // 1000
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


class Health:
    def __init__(self) -> None:
        self._started = time.monotonic()
        self._contributors: list[Contributor] = []

    def add_contributor(self, contributor: Contributor) -> None:
        self._contributors.append(contributor)

    def report(self, detailed: bool) -> dict[str, Any]:
        uptime_ms = int((time.monotonic() - self._started) * 1000)
        body: dict[str, Any] = {"status": "ok", "uptime": {"ms": uptime_ms, "human": human_duration(uptime_ms)}}
        if detailed:
            body["integrations"] = {}
            body["devices"] = {"total": 0, "online": 0, "offline": 0, "unknown": 0}
            for contributor in self._contributors:
                body.update(contributor())
            body["version"] = __version__
        return body
