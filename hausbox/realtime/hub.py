"""The WebSocket hub (spec, Events): ``/ws?token=``, topic subscriptions, 200 ms batches.

A lone event goes out at once; events that come within 200 ms of the last batch wait for the
next one, so no client gets two batches less than 200 ms apart and a busy house costs five
rounds a second. Events are collected per round in one ordered map shared by every client, deduplicated by
key (the latest value of a device datum, an equipment alias or a zone wins, moving to the end so
cause stays before effect). Each round serialises every event once and builds one batch per
distinct (topics, role) subscription, so 50 dashboards cost one encoding, not fifty.

Each client has its own writer greenlet and a bounded outbox: a client that stops reading only
fills its own outbox, and once that passes its limit the client is dropped with a reason. The
engine never waits on a socket.
"""

from __future__ import annotations

import json
import logging
import socket
import struct
import time
from itertools import count
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import parse_qs

import gevent
from gevent.event import Event as Signal
from gevent.queue import Queue

from hausbox import __version__
from hausbox.api.middleware import bearer_from_protocols
from hausbox.core.bus import Event, EventBus
from hausbox.core.errors import Unauthorized
from hausbox.core.events import PUBLIC_EVENTS
from hausbox.core.jsonenc import dumps_text

if TYPE_CHECKING:
    from hausbox.auth.principal import Principal
    from hausbox.auth.service import AuthService

log = logging.getLogger("hausbox.websocket")

TOPICS = frozenset(
    {"devices", "equipments", "zones", "modes", "recipes", "calendar", "mqtt-publishers", "system", "logs", "activity"}
)
ADMIN_TOPICS = frozenset({"mqtt-publishers", "logs"})
_TOPIC_OF_PREFIX = {
    "device": "devices",
    "equipment": "equipments",
    "zone": "zones",
    "mode": "modes",
    "recipe": "recipes",
    "calendar": "calendar",
    "mqtt-broker": "mqtt-publishers",
    "mqtt-publisher": "mqtt-publishers",
    "activity": "activity",
    "log": "logs",
}
TOPIC_OF: dict[str, str] = {name: _TOPIC_OF_PREFIX.get(name.split(".", 1)[0], "system") for name in PUBLIC_EVENTS}
SENT_ALONE = frozenset({"log.entry", "activity.added"})
REDACTED_FOR_STANDARD = frozenset({"system.error", "system.update.error", "system.update.progress"})
ADMIN_ONLY_PREFIX = "notification-publisher."
_DEDUPE: dict[str, Callable[[Event], str]] = {
    "device.data.updated": lambda e: f"d:{e.get('deviceId')}:{e.get('key')}",
    "device.status_changed": lambda e: f"ds:{e.get('deviceId')}",
    "device.heartbeat": lambda e: f"dh:{e.get('deviceId')}",
    "equipment.data.changed": lambda e: f"e:{e.get('equipmentId')}:{e.get('alias')}",
    "zone.data.changed": lambda e: f"z:{e.get('zoneId')}",
}

BATCH_INTERVAL_S = 0.2
REVALIDATE_EVERY_S = 5.0
CLOSE_INVALID_TOKEN = 4001
CLOSE_ORIGIN_REFUSED = 4003
CLOSE_TOO_SLOW = 1008
CLOSE_GOING_AWAY = 1001


def _encode(event: Event) -> str:
    return dumps_text(event)


def _redacted(event: Event) -> Event:
    return {**event, **{field: "[redacted]" for field in ("message", "error") if field in event}}


def _visible(event_type: str, is_admin: bool) -> bool:
    return is_admin or not event_type.startswith(ADMIN_ONLY_PREFIX)


class Client:
    """One connected socket: its caller, topics, and a bounded outbox drained by its own writer."""

    def __init__(self, ws: Any, principal: "Principal", max_backlog_bytes: int):
        self.ws = ws
        self.principal = principal
        self.is_admin = principal.is_admin
        self.topics: frozenset[str] = frozenset({"system"})
        self.max_backlog_bytes = max_backlog_bytes
        self.backlog_bytes = 0
        self.closed = False
        self.sending = False
        self._outbox: Queue = Queue()
        self._writer = gevent.spawn(self._write_loop)

    def subscribe(self, topics: Iterable[Any]) -> None:
        wanted = {t for t in topics if isinstance(t, str) and t in TOPICS}
        if not self.is_admin:
            wanted -= ADMIN_TOPICS
        self.topics = frozenset(wanted | {"system"})

    def send(self, text: str) -> bool:
        """Queue a message; False (and the client is dropped) once its backlog passes the limit."""
        if self.closed:
            return False
        size = len(text)
        # Only bytes still waiting count against a client: one message larger than the limit by
        # itself (a big batch) must not drop a client that has read everything sent so far.
        if self.backlog_bytes and self.backlog_bytes + size > self.max_backlog_bytes:
            log.warning("dropping WebSocket client of %s: %d bytes not read", self.principal.username, self.backlog_bytes)
            self.close(CLOSE_TOO_SLOW, "Too slow: event backlog exceeded")
            return False
        self.backlog_bytes += size
        self._outbox.put(text)
        return True

    def _write_loop(self) -> None:
        while not self.closed:
            text = self._outbox.get()
            if text is None:
                return
            self.sending = True
            try:
                self.ws.send(text)
            except Exception:
                self.closed = True
                return
            finally:
                self.sending = False
                self.backlog_bytes -= len(text) if text else 0

    def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        mid_frame = self.sending
        self._outbox.put(None)
        self._writer.kill(block=False)
        gevent.spawn(self._close_socket, code, reason, mid_frame)

    def _close_socket(self, code: int, reason: str, mid_frame: bool) -> None:
        try:
            if not mid_frame:  # a close frame after half a data frame would garble the stream
                with gevent.Timeout(1.0):
                    _send_close(self.ws, code, reason)
        except BaseException:
            pass
        finally:
            _abort(self.ws)


def _send_close(ws: Any, code: int, reason: str) -> None:
    """Send a close frame carrying ``code``.

    gevent-websocket 0.10's ``close(code, message)`` ignores ``code`` and sends ``str(message)`` as
    the whole payload (bytes come out as ``b'...'``), so clients read a garbage status code. Build
    the frame ourselves when the socket is gevent-websocket's; anything else gets ``close()``.
    """
    send_frame = getattr(ws, "send_frame", None)
    if send_frame is None:
        ws.close(code, reason.encode("utf-8"))
        return
    try:
        send_frame(struct.pack("!H", code) + reason.encode("utf-8")[:123], ws.OPCODE_CLOSE)
    finally:
        ws.closed = True  # the handler would otherwise send a second, code-less close frame


def _refuse(ws: Any, code: int, reason: str) -> list[bytes]:
    """Close an upgraded socket before the welcome."""
    try:
        _send_close(ws, code, reason)
    except Exception:
        pass
    return []


def _abort(ws: Any) -> None:
    try:
        handler = getattr(ws, "handler", None)
        sock = getattr(handler, "socket", None) if handler else None
        if sock is not None:
            # close() alone does nothing while the handler's rfile (a makefile) still holds the
            # socket: the peer never sees the end and our receive loop never returns. shutdown()
            # cuts the connection whatever holds it.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
    except Exception:
        pass


class WebSocketHub:
    def __init__(self, bus: EventBus, auth: "AuthService", max_backlog_bytes: int = 2 << 20, origin_allowed: Callable[[dict], bool] = lambda _environ: True):
        self._auth = auth
        self._origin_allowed = origin_allowed
        self._max_backlog = max_backlog_bytes
        self.clients: set[Client] = set()
        self._wanted: frozenset[str] = frozenset()  # union of every client's topics
        self._pending: dict[Any, Event] = {}
        self._sequence = count()
        self._loop: gevent.Greenlet | None = None
        self._has_pending = Signal()  # wakes the flush loop when the first event of a round comes
        self._last_batch_at = float("-inf")  # monotonic time of the last round that sent a batch
        bus.on_any(self._on_event)
        bus.on("auth.revoked", lambda _event: self.revalidate())

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._loop = gevent.spawn(self._flush_loop)

    def stop(self) -> None:
        for client in list(self.clients):
            client.close(CLOSE_GOING_AWAY, "Server shutting down")
        if self._loop is not None:
            self._loop.kill()

    # ---- the WSGI endpoint -------------------------------------------------------------------
    def handle(self, environ: dict, start_response: Callable) -> list[bytes]:
        ws = environ.get("wsgi.websocket")
        if ws is None:
            start_response("400 Bad Request", [("Content-Type", "application/json")])
            return [b'{"error":"WebSocket upgrade required"}']
        if not self._origin_allowed(environ):
            return _refuse(ws, CLOSE_ORIGIN_REFUSED, "Origin not allowed")
        token = (parse_qs(environ.get("QUERY_STRING", "")).get("token") or [""])[0]
        token = token or bearer_from_protocols(environ.get("HTTP_SEC_WEBSOCKET_PROTOCOL", "")) or ""
        try:
            principal = self._auth.principal_from_token(token) if token else None
        except Unauthorized:
            principal = None
        if principal is None:
            return _refuse(ws, CLOSE_INVALID_TOKEN, "Invalid token")
        ws.send(_encode({"type": "connected", "message": "Connected to hausbox", "version": __version__}))
        client = Client(ws, principal, self._max_backlog)
        self._add(client)
        try:
            while not client.closed:
                message = ws.receive()
                if message is None:
                    break
                self._on_message(client, message)
        except Exception:
            pass
        finally:
            client.close(CLOSE_GOING_AWAY, "")
            self._remove(client)
        return []

    def _on_message(self, client: Client, message: Any) -> None:
        try:
            data = json.loads(message)
        except (TypeError, ValueError):
            return
        if isinstance(data, dict) and data.get("type") == "subscribe" and isinstance(data.get("topics"), list):
            client.subscribe(data["topics"])
            self._refresh_wanted()

    def _add(self, client: Client) -> None:
        self.clients.add(client)
        self._refresh_wanted()

    def _remove(self, client: Client) -> None:
        self.clients.discard(client)
        self._refresh_wanted()

    def _refresh_wanted(self) -> None:
        self._wanted = frozenset().union(*(c.topics for c in self.clients)) if self.clients else frozenset()

    # ---- events ------------------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        event_type = event["type"]
        topic = TOPIC_OF.get(event_type)
        if topic is None or topic not in self._wanted:
            return
        if event_type in SENT_ALONE:
            self._send_alone(event, topic)
            return
        dedupe = _DEDUPE.get(event_type)
        key = dedupe(event) if dedupe else next(self._sequence)
        pending = self._pending
        if not pending:
            self._has_pending.set()
        pending.pop(key, None)
        pending[key] = event

    def _send_alone(self, event: Event, topic: str) -> None:
        text = _encode(event)
        for client in list(self.clients):
            if topic in client.topics:
                client.send(text)

    def _flush_loop(self) -> None:
        next_check = time.monotonic() + REVALIDATE_EVERY_S
        while True:
            self._has_pending.wait(max(0.0, next_check - time.monotonic()))
            try:
                if self._pending:
                    # The first event after a quiet spell goes at once (this greenlet runs once the
                    # emitter yields, so with all that the same message caused); later ones join the
                    # batch due 200 ms after the last. The loop's timers may fire a little early.
                    due = self._last_batch_at + BATCH_INTERVAL_S
                    while (left := due - time.monotonic()) > 0:
                        gevent.sleep(left)
                    self.flush()
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + REVALIDATE_EVERY_S
                    self.revalidate()
            except Exception:
                log.exception("WebSocket flush failed")

    def flush(self) -> None:
        """Send every client the batch of the events it may see since the last round."""
        if not self._pending:
            return
        events = list(self._pending.values())
        self._pending = {}
        self._has_pending.clear()
        encoded: dict[int, str] = {}
        batches: dict[tuple[frozenset[str], bool], str | None] = {}
        for client in list(self.clients):
            group = (client.topics, client.is_admin)
            if group not in batches:
                batches[group] = self._batch(events, encoded, *group)
            batch = batches[group]
            if batch is not None:
                client.send(batch)
        if any(batches.values()):
            self._last_batch_at = time.monotonic()

    def _batch(self, events: list[Event], encoded: dict[int, str], topics: frozenset[str], is_admin: bool) -> str | None:
        parts = []
        for index, event in enumerate(events):
            event_type = event["type"]
            if TOPIC_OF[event_type] not in topics or not _visible(event_type, is_admin):
                continue
            if not is_admin and event_type in REDACTED_FOR_STANDARD:
                parts.append(_encode(_redacted(event)))
                continue
            text = encoded.get(index)
            if text is None:
                text = encoded[index] = _encode(event)
            parts.append(text)
        return "[" + ",".join(parts) + "]" if parts else None

    def revalidate(self) -> None:
        """Drop the clients whose credential was revoked or whose role changed since they connected."""
        for client in list(self.clients):
            if not self._auth.still_valid(client.principal):
                client.close(CLOSE_INVALID_TOKEN, "Credential no longer valid")
                self._remove(client)
