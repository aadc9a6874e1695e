"""Serve the engine over HTTP + WebSocket with gevent, and stop cleanly on SIGTERM / SIGINT."""

from __future__ import annotations

import gc
import logging
import os
import signal

import gevent
from gevent.event import Event
from gevent.pool import Pool
from gevent.pywsgi import WSGIServer

from hausbox.api.app import build_app
from hausbox.api.connection import handler_class
from hausbox.config import Config
from hausbox.engine import Engine

log = logging.getLogger("hausbox.server")

DRAIN_TIMEOUT_S = 10.0
# Connections served at once (keep-alive and WebSocket ones included): beyond, new connections
# wait in the kernel's listen queue instead of each taking a slice of the one core.
MAX_CONNECTIONS = 256


class InFlight:
    """The requests being answered right now, so a stop can wait for them.

    gevent's ``WSGIServer.stop`` waits for nothing without a pool, and with one it would also wait
    for idle keep-alive connections; counting responses waits for exactly the work under way.
    """

    def __init__(self) -> None:
        self.active = 0
        self.idle = Event()
        self.idle.set()

    def started(self) -> None:
        self.active += 1
        self.idle.clear()

    def ended(self) -> None:
        self.active -= 1
        if self.active == 0:
            self.idle.set()


def serve(config: Config) -> int:
    os.umask(0o077)  # every file the service writes (database, logs, snapshots, secrets) is its user's alone
    engine = Engine(config)
    in_flight = InFlight()
    server = WSGIServer(
        (config.bind, config.port),
        build_app(engine),
        handler_class=handler_class(config.http_idle_s, config.http_header_s, in_flight.started, in_flight.ended),
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

        advertising = gevent.spawn(advertise, config.port, engine)  # mDNS probing takes seconds: not on the boot path
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
