"""One HTTP connection, as gevent's pywsgi (and gevent-websocket) serve it, with what a box on a LAN
needs around it: turns on the one core, bounds on time and on connections per client, and no
ambiguous request framing.

- Turns: gevent serves a keep-alive connection's next request without going back to the loop when
  its bytes are already there, so a few busy connections would hold the core while the others and
  the message path wait. Such a connection resumes only after the loop's next round of I/O.
- Time: a connection waits at most ``idle_s`` for its next request line (and for any single read or
  write), and a request's headers must all arrive within ``header_s`` (``Config.http_idle_s`` and
  ``http_header_s``): slow or idle clients cannot hold the connection slots. One sweeper enforces
  the two waits for every connection. A WebSocket, idle by nature, is exempt once upgraded.
- Connections per client address: at most ``MAX_PER_CLIENT``; more get a 429 and are closed.
- Framing: two Content-Length headers, Content-Length with Transfer-Encoding, or a transfer coding
  other than chunked are refused (request smuggling behind a proxy); chunked bodies are accepted.
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from typing import Any, Callable

import gevent
import gevent.monkey
from geventwebsocket.handler import WebSocketHandler

from hausbox.core.jsonenc import dumps as json_bytes

TURN_S = 1e-6  # any delay > 0 resumes a greenlet only after the loop polled for I/O
MAX_PER_CLIENT = 100
ONE_SEND_MAX_BYTES = 64 << 10

_select = gevent.monkey.get_original("select", "select")  # the system call itself, never waits


class BadFraming(ValueError):
    """A request whose body boundaries are ambiguous or unsupported (gevent answers ValueErrors 400)."""


class SlowHeaders(ValueError):
    """The request's headers did not arrive in time."""


def refusal(status: str, message: str) -> bytes:
    """A whole HTTP response that closes the connection, with the JSON error body of the API."""
    body = json_bytes({"error": message})
    head = f"HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode("latin-1") + body


def _readable(sock: Any) -> bool:
    try:
        return bool(_select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return False


class Deadlines:
    """When each waiting connection must be done waiting: one sweeper for all of them, which throws
    the given error into a late connection's greenlet (a timer per request cost ~5 us of ~200)."""

    SWEEP_S = 0.25

    def __init__(self) -> None:
        self._due: dict[gevent.Greenlet, tuple[float, BaseException]] = {}
        self._sweeper: gevent.Greenlet | None = None

    def set(self, seconds: float, error: BaseException) -> None:
        """The current greenlet must be done within ``seconds``, else ``error`` is raised in it."""
        self._due[gevent.getcurrent()] = (time.monotonic() + seconds, error)
        if self._sweeper is None:
            self._sweeper = gevent.spawn(self._sweep)

    def clear(self) -> None:
        self._due.pop(gevent.getcurrent(), None)

    def _sweep(self) -> None:
        while True:
            gevent.sleep(self.SWEEP_S)
            now = time.monotonic()
            for greenlet, (due, error) in list(self._due.items()):
                if due <= now:
                    del self._due[greenlet]
                    greenlet.kill(error, block=False)


def handler_class(idle_s: float, header_s: float, on_request_start: Callable[[], None], on_request_end: Callable[[], None]) -> type:
    """The handler class of the server; the two callbacks frame each response (see ``server.InFlight``)."""
    per_client: Counter[str] = Counter()
    deadlines = Deadlines()

    class Handler(WebSocketHandler):
        body_framing: tuple[list[str], list[str]] = ([], [])

        def __init__(self, sock, address, server, rfile=None):  # noqa: ANN001 - gevent's signature
            # pywsgi writes headers and body separately: with Nagle on, every keep-alive response
            # then waits ~40 ms for the client's delayed ACK.
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            sock.settimeout(idle_s)  # any single read or write of a response or a body
            super().__init__(sock, address, server, rfile)

        def handle(self) -> None:
            client = self.client_address[0] if isinstance(self.client_address, tuple) else str(self.client_address)
            if per_client[client] >= MAX_PER_CLIENT:
                try:
                    self.socket.sendall(refusal("429 Too Many Requests", "Too many connections from this address"))
                finally:
                    self.socket.close()
                return
            per_client[client] += 1
            try:
                super().handle()
            finally:
                per_client[client] -= 1
                if not per_client[client]:
                    del per_client[client]

        def MessageClass(self, *args: Any) -> Any:  # noqa: N802 - gevent's name
            headers = super().MessageClass(*args)
            # Kept before gevent drops Content-Length from a chunked request.
            self.body_framing = (headers.get_all("content-length") or [], headers.get_all("transfer-encoding") or [])
            return headers

        def read_requestline(self) -> Any:
            # Waiting for the next request: the sweeper ends a connection idle too long (read as a
            # dropped connection: it closes quietly).
            self.socket.settimeout(None)  # the sweeper's deadline instead of a timer per wait
            deadlines.set(idle_s, socket.timeout("idle"))
            try:
                return super().read_requestline()
            finally:
                deadlines.clear()
                self.socket.settimeout(idle_s)

        def read_request(self, raw_requestline: str) -> Any:
            deadlines.set(header_s, SlowHeaders("Request headers not received in time"))
            try:
                result = super().read_request(raw_requestline)
            finally:
                deadlines.clear()
            lengths, codings = self.body_framing
            if len(lengths) > 1:
                raise BadFraming("More than one Content-Length")
            if codings and lengths:
                raise BadFraming("Both Content-Length and Transfer-Encoding")
            if codings and [c.strip().lower() for c in ",".join(codings).split(",")] != ["chunked"]:
                raise BadFraming("Unsupported Transfer-Encoding")
            return result

        def _handle_client_error(self, ex: BaseException) -> Any:
            if isinstance(ex, SlowHeaders):
                return ("408", refusal("408 Request Timeout", str(ex)))
            if isinstance(ex, BadFraming):
                return ("400", refusal("400 Bad Request", str(ex)))
            super()._handle_client_error(ex)  # logs it
            return ("400", refusal("400 Bad Request", "Malformed request"))

        def handle_one_request(self) -> Any:
            result = super().handle_one_request()
            if result is True and _readable(self.socket):
                # Kept alive, and the client's next request is already there: take turns (sleep(0)
                # would only run other greenlets already scheduled, and kept the MQTT reader waiting).
                gevent.sleep(TURN_S)
            return result

        def _write_with_headers(self, data: bytes) -> None:
            # gevent sends a response's head and its body in two system calls: one does for a body
            # that is not large (most answers), collected through gevent's own writer.
            if len(data) > ONE_SEND_MAX_BYTES:
                return super()._write_with_headers(data)
            pending: list[bytes] = []
            self._sendall = pending.append  # shadows the method for the two calls below
            try:
                super()._write_with_headers(data)
            finally:
                del self._sendall
            self._sendall(b"".join(pending))

        def handle_one_response(self) -> Any:
            if self.environ.get("HTTP_UPGRADE", "").lower() == "websocket":
                self.socket.settimeout(None)  # a WebSocket may stay quiet for hours
            on_request_start()
            try:
                return super().handle_one_response()
            finally:
                on_request_end()

    return Handler
