"""Logging: an in-memory ring buffer for the log API, a rolling daily file, and secret redaction.

Loggers are named ``hausbox.<module>``; the module name is what the log API reports. The ring
buffer always receives debug and above and filters by its own runtime level (``PUT /logs/level``);
the file and the console follow ``LOG_LEVEL``. Our handlers write only the redactor's text of a
record, so a password, token or channel secret never reaches a log entry, whatever the caller
wrote; the record itself is left untouched for any other handler.
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

from hausbox.core.clock import iso_utc, parse_iso

RING_CAPACITY = 2000
FILE_DAYS_KEPT = 14
REDACTED = "[REDACTED]"

# Our level names (the spec's) and the stdlib numbers they stand for.
LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "fatal": logging.CRITICAL,
    "silent": logging.CRITICAL + 10,
}
_NAMES = {number: name for name, number in LEVELS.items() if name != "silent"}

Entry = dict[str, Any]


def level_name(levelno: int) -> str:
    return _NAMES.get(levelno) or ("debug" if levelno < logging.INFO else "info" if levelno < logging.WARNING else "error")


def get_logger(module: str) -> logging.Logger:
    return logging.getLogger("hausbox." + module)


def by_actor(actor: str | None) -> str:
    """The end of a log line about an administrative change: `` by <actor>`` when it is known."""
    return f" by {actor}" if actor else ""


log = get_logger("logs")


class Redactor:
    """The text of a record (message and traceback) with secrets replaced by ``[REDACTED]``.

    Known secret values (registered as they are learnt: signing keys, setting passwords, channel
    tokens) are replaced literally; the patterns catch what was never registered: our API tokens,
    JWTs, bcrypt hashes, ``password=...`` style pairs and credentials inside URLs.
    """

    _PATTERNS = [
        (re.compile(r"hbx_[0-9a-fA-F]{16,}"), REDACTED),
        (re.compile(r"eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}"), REDACTED),
        (re.compile(r"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}"), REDACTED),
        (re.compile(r"(\w+://[^/\s:@]+:)[^@\s/]+@"), r"\1" + REDACTED + "@"),
        (
            re.compile(
                r"""((?:password|passwd|secret|token|api[_-]?key|accessToken|refreshToken|authorization)["']?\s*[:=]\s*["']?)"""
                r"""(?:Bearer\s+)?[^\s"',;}]+""",
                re.IGNORECASE,
            ),
            r"\1" + REDACTED,
        ),
    ]

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def add_secret(self, value: str) -> None:
        if value and len(value) >= 4:
            with self._lock:
                self._known = self._known | {value}

    def redact(self, text: str) -> str:
        for secret in self._known:
            if secret in text:
                text = text.replace(secret, REDACTED)
        for pattern, replacement in self._PATTERNS:
            text = pattern.sub(replacement, text)
        return text

    def text_of(self, record: logging.LogRecord) -> str:
        """The record's message, with its traceback if any, redacted (computed once per record)."""
        cached = record.__dict__.get("_hausbox_text")
        if cached is None:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            cached = record.__dict__["_hausbox_text"] = self.redact(message)
        return cached


def _module_of(record: logging.LogRecord) -> str:
    name = record.name
    return name[len("hausbox."):] if name.startswith("hausbox.") else name


class RingBuffer(logging.Handler):
    """The last ``RING_CAPACITY`` entries, queried by the log API and streamed to listeners."""

    def __init__(self, redactor: Redactor, capacity: int = RING_CAPACITY):
        super().__init__(level=logging.DEBUG)
        self.redactor = redactor
        self.capacity = capacity
        self._entries: deque[Entry] = deque(maxlen=capacity)
        self._modules: set[str] = set()
        self._listeners: tuple[Callable[[Entry], None], ...] = ()
        self._notifying = threading.local()
        self.runtime_level = "debug"

    def set_runtime_level(self, name: str, by: str | None = None) -> str:
        """Apply a level; the change is logged at info while the more verbose of the two applies."""
        previous = self.runtime_level
        if name != previous:
            self._apply_level(min(previous, name, key=LEVELS.__getitem__))
            log.info("log level changed from %s to %s%s", previous, name, by_actor(by))
        self._apply_level(name)
        return previous

    def _apply_level(self, name: str) -> None:
        self.runtime_level = name
        self.setLevel(LEVELS[name])

    def add_listener(self, listener: Callable[[Entry], None]) -> None:
        self._listeners = self._listeners + (listener,)

    def emit(self, record: logging.LogRecord) -> None:
        entry = {
            "level": level_name(record.levelno),
            "module": _module_of(record),
            "msg": self.redactor.text_of(record),
            "time": iso_utc(int(record.created * 1000)),
        }
        self._entries.append(entry)
        self._modules.add(entry["module"])
        # A listener that logs would re-enter here; its own entries are kept but not re-streamed.
        if getattr(self._notifying, "active", False):
            return
        self._notifying.active = True
        try:
            for listener in self._listeners:
                try:
                    listener(entry)
                except Exception:
                    pass
        finally:
            self._notifying.active = False

    def query(
        self,
        limit: int = 100,
        level: str | None = None,
        module: str | None = None,
        search: str | None = None,
        since: str | None = None,
    ) -> list[Entry]:
        """The last ``limit`` entries matching every given filter, oldest first."""
        minimum = LEVELS.get(level or "", 0)
        needle = (search or "").lower()
        since_ms = parse_iso(since) if since else None
        matches: list[Entry] = []
        for entry in reversed(self._entries):
            if len(matches) >= limit:
                break
            if minimum and LEVELS[entry["level"]] < minimum:
                continue
            if module and entry["module"] != module:
                continue
            if needle and needle not in entry["msg"].lower():
                continue
            if since_ms is not None and parse_iso(entry["time"]) < since_ms:
                continue
            matches.append(entry)
        matches.reverse()
        return matches

    def modules(self) -> list[str]:
        return sorted(self._modules)


class _LineFormatter(logging.Formatter):
    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        when = iso_utc(int(record.created * 1000))
        return f"{when} {level_name(record.levelno).upper():5} {_module_of(record)}: {self.redactor.text_of(record)}"


class DailyFile(logging.handlers.TimedRotatingFileHandler):
    """The daily log file. A line it cannot write (a full disk) is dropped with one note on stderr
    until writing works again, not a traceback per line: the ring buffer (GET /logs) still has it."""

    failing = False
    _wrote = True

    def emit(self, record: logging.LogRecord) -> None:
        self._wrote = True
        super().emit(record)  # calls handleError when the write fails
        if self._wrote and self.failing:
            self.failing = False
            sys.stderr.write("hausbox: the log file is written again\n")

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self._wrote = False
        if not self.failing:
            self.failing = True
            sys.stderr.write("hausbox: cannot write the log file (disk full?): lines are kept in memory only\n")


def setup_logging(log_dir: Path | None, file_level: str) -> tuple[RingBuffer, Redactor]:
    """Attach the ring buffer, the daily file (when ``log_dir`` is given) and the console."""
    if file_level not in LEVELS:
        raise SystemExit(f"LOG_LEVEL must be one of {', '.join(LEVELS)}, got {file_level!r}")
    root = logging.getLogger("hausbox")
    root.setLevel(logging.DEBUG)
    root.propagate = False
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    redactor = Redactor()
    ring = RingBuffer(redactor)
    handlers: list[logging.Handler] = [ring]
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(LEVELS[file_level])
    handlers.append(console)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        daily = DailyFile(
            log_dir / "hausbox.log", when="midnight", backupCount=FILE_DAYS_KEPT - 1, encoding="utf-8", utc=False
        )
        daily.setLevel(LEVELS[file_level])
        handlers.append(daily)
    for handler in handlers:
        if handler is not ring:
            handler.setFormatter(_LineFormatter(redactor))
        root.addHandler(handler)
    return ring, redactor


