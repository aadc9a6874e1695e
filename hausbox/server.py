"""Serve the engine over HTTP + WebSocket with gevent, and stop cleanly on SIGTERM / SIGINT."""

from __future__ import annotations

import gc
import logging
import signal
import socket

import gevent
import gevent.monkey
from gevent.event import Event
from gevent.pool import Pool
from gevent.pywsgi import WSGIServer
from geventwebsocket.handler import WebSocketHandler

from hausbox.api.app import build_app
from hausbox.config import Config
from hausbox.engine import Engine

log = logging.getLogger("hausbox.server")

DRAIN_TIMEOUT_S = 10.0
# Connections served at once (keep-alive and WebSocket ones included): beyond, new connections
# wait in the kernel's listen queue instead of each taking a slice of the one core.
MAX_CONNECTIONS = 256
TURN_S = 1e-6  # any delay > 0 resumes a greenlet only after the loop polled for I/O

_select = gevent.monkey.get_original("select", "select")  # the system call itself, never waits


def _readable(sock: socket.socket) -> bool:
    try:
        return bool(_select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return False


class InFlight:
    """The requests being answered right now, so a stop can wait for them.

    gevent's ``WSGIServer.stop`` waits for nothing without a pool, and with one it would also wait
    for idle keep-alive connections; counting responses waits for exactly the work under way.
    """

    def __init__(self) -> None:
        self.active = 0
        self.idle = Event()
        self.idle.set()

    def handler_class(self) -> type:
        tracker = self

        class Handler(WebSocketHandler):
            def __init__(self, sock, address, server, rfile=None):  # noqa: ANN001 - gevent's signature
                # pywsgi writes headers and body separately: with Nagle on, every keep-alive
                # response then waits ~40 ms for the client's delayed ACK.
                try:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    pass
                super().__init__(sock, address, server, rfile)

            def handle_one_request(self):  # noqa: ANN202 - gevent's signature
                result = super().handle_one_request()
                if result is True and _readable(self.socket):
                    # Kept alive, and the client's next request is already there: gevent would read
                    # and serve it without going back to the loop, so a few busy connections would
                    # hold the core while the others and the message path wait. Take turns: resume
                    # after the loop's next round of I/O (sleep(0) would only run other greenlets
                    # already scheduled, and kept the MQTT reader waiting for seconds).
                    gevent.sleep(TURN_S)
                return result

            def handle_one_response(self):  # noqa: ANN202 - gevent's signature
                tracker.active += 1
                tracker.idle.clear()
                try:
                    return super().handle_one_response()
                finally:
                    tracker.active -= 1
                    if tracker.active == 0:
                        tracker.idle.set()

        return Handler


def serve(config: Config) -> int:
    engine = Engine(config)
    in_flight = InFlight()
    server = WSGIServer(
        (config.bind, config.port),
        build_app(engine),
        handler_class=in_flight.handler_class(),
        spawn=Pool(MAX_CONNECTIONS),
        log=None,
        error_log=logging.getLogger("hausbox.http"),
    )
    stopping = Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, stopping.set)
    server.start()
    engine.start()
    # What start-up built lives as long as the process: keep it out of the cyclic collector's
    # scans, whose full passes otherwise set the tail latency.
    gc.collect()
    gc.freeze()
    advertising = None
    if config.mdns:
        from hausbox.system.mdns import advertise

        advertising = gevent.spawn(advertise, config.port)  # mDNS probing takes seconds: not on the boot path
    log.info("listening on %s:%d", config.bind, config.port)
    stopping.wait()
    log.info("shutting down: draining requests")
    if advertising is not None:
        if not advertising.ready():
            advertising.kill()
        elif advertising.value is not None:
            advertising.value.close()
    engine.hub.stop()  # WebSockets never end by themselves: close them so the drain can finish
    server.close()  # stop accepting; the requests under way finish
    if not in_flight.idle.wait(DRAIN_TIMEOUT_S):
        log.warning("%d request(s) still running after %.0f s: stopping anyway", in_flight.active, DRAIN_TIMEOUT_S)
    engine.stop()
    log.info("stopped")
    return 0
