"""The optional InfluxDB export: the history's points, as line protocol, to a 1.x or 2.x server.

``add`` is called by the history writer right after a commit and only hands the batch to the
export's own worker; without a configured and enabled export it drops it at once. That worker
appends the lines to a bounded on-disk queue (``export_queue``) and sends them in batches, removing
them only once the server answered 2xx. While the server is away it retries with a growing delay
(points wait on disk, across restarts, up to the bound); after a while away an alarm says so.
A batch the server refuses as malformed (400) is dropped and counted: InfluxDB has written the good
lines of it already (a partial write), and one bad point must not jam the queue. 401/403/404 keep
the points: the settings need fixing, not the data. Passwords and tokens never reach a log line,
``lastError`` or the status.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit


from hausbox.core.clock import Clock, iso_utc
from hausbox.core.urls import MASK, mask_credentials
from hausbox.core.workers import Worker
from hausbox.history.counts import Last24h
from hausbox.history.export_queue import ExportQueue
from hausbox.history.lineprotocol import ExportPoint, encode

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

log = logging.getLogger("hausbox.history.export")

PREFIX = "history.influx."
ENABLED_KEY, URL_KEY, VERSION_KEY = PREFIX + "enabled", PREFIX + "url", PREFIX + "version"
DATABASE_KEY, USERNAME_KEY, PASSWORD_KEY = PREFIX + "database", PREFIX + "username", PREFIX + "password"
ORG_KEY, BUCKET_KEY, TOKEN_KEY = PREFIX + "org", PREFIX + "bucket", PREFIX + "token"

FILE_NAME = "history-export.db"
ALARM_ID = "history-export"
MAX_QUEUED = 500_000  # lines waiting on disk (about 100 bytes each: ~50 MB at worst)
BATCH_LINES = 5000  # lines per POST
TIMEOUT_S = 10.0
BACKOFF_S = (1.0, 60.0)  # first and longest wait between attempts while the server is away
ALARM_AFTER_S = 300.0  # away this long before the alarm is raised
ERROR_TEXT_MAX = 200


# ---- settings ----------------------------------------------------------------------------------
def check_enabled(value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")


def check_url(value: Any) -> None:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError("must be an http:// or https:// URL of the InfluxDB server")
    try:
        parts.port  # noqa: B018 -- raises for a port that is not a number
    except ValueError:
        raise ValueError("must be an http:// or https:// URL of the InfluxDB server") from None


def check_version(value: Any) -> None:
    if isinstance(value, bool) or value not in (1, 2):
        raise ValueError("must be 1 or 2")


def check_name(value: Any) -> None:
    """Database, user, org, bucket: a line of text."""
    if not isinstance(value, str) or "\n" in value or "\r" in value or len(value) > 256:
        raise ValueError("must be text on one line (at most 256 characters)")


def check_secret(value: Any) -> None:
    if not isinstance(value, str) or len(value) > 4096:
        raise ValueError("must be text")


VALIDATORS = {
    ENABLED_KEY: check_enabled, URL_KEY: check_url, VERSION_KEY: check_version, DATABASE_KEY: check_name, USERNAME_KEY: check_name,
    PASSWORD_KEY: check_secret, ORG_KEY: check_name, BUCKET_KEY: check_name, TOKEN_KEY: check_secret,
}  # fmt: skip


@dataclass(frozen=True)
class Target:
    """Where and how to write, from the settings."""

    version: int
    url: str  # as configured (may hold credentials: show ``shown_url``)
    params: dict[str, str]
    headers: dict[str, str]
    auth: tuple[str, str] | None
    secrets: tuple[str, ...]  # what must never be shown

    @property
    def write_url(self) -> str:
        return self.url.rstrip("/") + ("/write" if self.version == 1 else "/api/v2/write")

    @property
    def shown_url(self) -> str:
        return mask_credentials(self.url)

    def clean(self, text: str) -> str:
        """``text`` with every secret of the target masked, cut to a status-sized length."""
        text = mask_credentials(text)
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text[:ERROR_TEXT_MAX]


def target_from(settings: Any) -> Target | None:
    """The target the settings describe, or None while they are incomplete."""
    url = settings.get(URL_KEY)
    if not url:
        return None
    version = settings.get(VERSION_KEY, 1)
    if version == 2:
        org, bucket, token = settings.get(ORG_KEY), settings.get(BUCKET_KEY), settings.get(TOKEN_KEY)
        if not (org and bucket and token):
            return None
        return Target(2, url, {"org": org, "bucket": bucket, "precision": "ms"}, {"Authorization": f"Token {token}"}, None, (token,))
    database = settings.get(DATABASE_KEY)
    if not database:
        return None
    username, password = settings.get(USERNAME_KEY) or "", settings.get(PASSWORD_KEY) or ""
    # Basic auth rather than u=/p= in the query: a query string ends up in debug logs.
    auth = (username, password) if username else None
    return Target(1, url, {"db": database, "precision": "ms"}, {}, auth, (password,) if password else ())


# ---- the exporter ------------------------------------------------------------------------------------
class InfluxExport:
    def __init__(
        self, settings: Any, worker: Worker, clock: Clock, data_dir: Path, alarms: Any, *, max_queued: int = MAX_QUEUED, batch_lines: int = BATCH_LINES,
        timeout_s: float = TIMEOUT_S, backoff_s: tuple[float, float] = BACKOFF_S, alarm_after_s: float = ALARM_AFTER_S,
    ):  # fmt: skip
        self._settings = settings
        self._worker = worker
        self._clock = clock
        self._alarms = alarms
        self._batch_lines = batch_lines
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._alarm_after_ms = int(alarm_after_s * 1000)
        for key, check in VALIDATORS.items():
            settings.add_validator(key, check)
        self._queue: ExportQueue | None = ExportQueue(data_dir / FILE_NAME, max_queued)
        self._session: requests.Session | None = None  # made at the first exchange
        self._running = False
        self._send_pending = False  # a _send job is in the worker's queue
        self._retry: Any = None  # the timer of the next attempt while the server is away
        self._delay_s = backoff_s[0]
        self._failing_since: int | None = None
        self._alarmed = False
        self._sent = Last24h()
        self.connected: bool | None = None  # None: not tried since start or the last settings change
        self.rejected = 0  # lines in batches the server refused as malformed
        self.last_error: str | None = None
        self.last_sent_at: int | None = None
        worker.on("settings.changed", self._settings_changed, accept=lambda event: any(k.startswith(PREFIX) for k in event["keys"]))

    # ---- the history writer's side: cheap, never waits ------------------------------------------
    def active(self) -> bool:
        """Whether points are exported: enabled, and the settings say where to."""
        return self._settings.get(ENABLED_KEY) is True and target_from(self._settings) is not None

    def add(self, points: list[ExportPoint]) -> None:
        """Hand points just committed locally to the export (nothing is queued while it is off)."""
        if not points or not self.active():
            return
        if self._running:
            self._worker.submit(self._append, points)
        else:
            self._append(points)  # after stop: the shutdown's last commit, queued on disk at once

    # ---- the worker's side ---------------------------------------------------------------------------
    def _append(self, points: list[ExportPoint]) -> None:
        if self._queue is None:
            log.warning("InfluxDB export closed: %d point(s) not queued", len(points))
            return
        lines = [line for line in map(encode, points) if line is not None]
        try:
            pushed_out = self._queue.append(lines)
        except Exception as error:  # noqa: BLE001 -- a full disk must not stop the history writer
            log.error("InfluxDB export: %d point(s) could not be queued: %s", len(lines), error)
            return
        if pushed_out:
            log.warning("InfluxDB export queue full (%d): the %d oldest point(s) dropped", self._queue.bound, pushed_out)
        self._kick()

    def _kick(self) -> None:
        """Send soon, unless a send is queued already or the server is being waited for."""
        if self._running and not self._send_pending and self._retry is None:
            self._send_pending = True
            self._worker.submit(self._send)

    def _send(self) -> None:
        """One batch (or a ping when nothing waits and the server's state is unknown)."""
        self._send_pending = False
        target = target_from(self._settings)
        if not self._running or self._queue is None or target is None or self._settings.get(ENABLED_KEY) is not True:
            return
        rows = self._queue.oldest(self._batch_lines)
        if not rows and self.connected:
            return  # nothing waits; a ping only while the server's state is unknown or bad
        outcome, error = self._exchange(target, "\n".join(line for _, line in rows) if rows else None)
        if outcome == "failed":
            self._failed(target, error or "failed")
            return
        if rows:
            self._queue.remove_through(rows[-1][0])
        if outcome == "rejected":
            self.rejected += len(rows)
            self.last_error = error
            log.error("InfluxDB refused %d point(s) as malformed, dropped: %s", len(rows), error)
        elif rows:
            self._count_sent(len(rows))
        self._succeeded(target)
        if self._queue.count:
            self._kick()

    def _exchange(self, target: Target, body: str | None) -> tuple[str, str | None]:
        """POST ``body`` (or GET /ping for None): ("ok" | "rejected" | "failed", error text)."""
        import requests

        if self._session is None:
            self._session = requests.Session()
        try:
            if body is None:
                response = self._session.get(target.url.rstrip("/") + "/ping", timeout=self._timeout_s, auth=target.auth)
            else:
                response = self._session.post(
                    target.write_url, params=target.params, data=body.encode(), headers=target.headers, auth=target.auth, timeout=self._timeout_s
                )
        except requests.Timeout:
            return "failed", f"no answer within {self._timeout_s:g} s"
        except requests.RequestException as error:
            reason = re.search(r"\[Errno -?\d+\][^'\")]*", str(error))
            return "failed", target.clean(f"cannot reach {target.shown_url}: {reason.group(0) if reason else type(error).__name__}")
        if 200 <= response.status_code < 300:
            return "ok", None
        error = target.clean(f"HTTP {response.status_code}: {response.text.strip()}")
        if response.status_code in (400, 413, 422):  # malformed, too large, or outside the retention: never accepted
            return "rejected", error
        return "failed", error  # 401/403/404 (settings), 429/5xx (the server): keep the points, try again

    def _failed(self, target: Target, error: str) -> None:
        now = self._clock.now_ms()
        first = self._failing_since is None
        if first:
            self._failing_since = now
            log.warning("InfluxDB export to %s failed, will retry: %s", target.shown_url, error)
        self.connected = False
        self.last_error = error
        if not self._alarmed and now - (self._failing_since or now) >= self._alarm_after_ms:
            minutes = (now - (self._failing_since or now)) // 60_000
            queued = self._queue.count if self._queue else 0
            self._alarms.raise_alarm(ALARM_ID, "warning", "history", f"InfluxDB export failing for {minutes} min ({error}); {queued} point(s) waiting")
            self._alarmed = True
        delay = self._delay_s
        self._delay_s = min(self._backoff_s[1], delay * 2)
        self._retry = self._clock.call_later(delay, self._retry_now)

    def _retry_now(self) -> None:
        self._retry = None
        self._kick()

    def _succeeded(self, target: Target) -> None:
        if self._failing_since is not None:
            log.info("InfluxDB export to %s works again", target.shown_url)
        self._failing_since = None
        self._delay_s = self._backoff_s[0]
        self.connected = True
        if self._alarmed:
            self._alarms.resolve(ALARM_ID, "InfluxDB export works again")
            self._alarmed = False

    def _count_sent(self, lines: int) -> None:
        now = self._clock.now_ms()
        self.last_error = None
        self.last_sent_at = now
        self._sent.add(now, lines)

    def _settings_changed(self, _event: Any) -> None:
        """New settings: forget the old server's state and try the new one at once."""
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._delay_s = self._backoff_s[0]
        self._failing_since = None
        self.connected = None
        self.last_error = None
        if self._alarmed:
            self._alarms.resolve(ALARM_ID, "InfluxDB export settings changed")
            self._alarmed = False
        self._kick()

    # ---- status and stages -------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """``export`` inside ``GET /history/status``."""
        target = target_from(self._settings)
        now = self._clock.now_ms()
        return {
            "configured": target is not None, "enabled": self._settings.get(ENABLED_KEY) is True,
            "connected": bool(self.connected) and self.active(), "version": target.version if target else None,
            "url": target.shown_url if target else None, "queued": self._queue.count if self._queue else 0,
            "sent24h": self._sent.total(now), "dropped": self._queue.dropped if self._queue else 0,
            "rejected": self.rejected, "lastError": self.last_error, "lastSentAt": iso_utc(self.last_sent_at),
        }  # fmt: skip

    def start(self) -> None:
        """Send what waited on disk from before (and probe the server)."""
        self._running = True
        self._kick()

    def stop(self) -> None:
        """No more sends; what the worker still holds is queued on disk."""
        self._running = False
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def final_write(self) -> None:
        """After the workers stopped (and the history's last commit was added): close the file."""
        self.stop()
        if self._queue is not None:
            self._queue.close()
            self._queue = None
        if self._session is not None:
            self._session.close()
