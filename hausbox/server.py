"""Serve the engine over HTTP + WebSocket with gevent, and stop cleanly on SIGTERM / SIGINT."""

from __future__ import annotations

import logging
import os
import signal

import gevent
from gevent.event import Event
from gevent.pywsgi import WSGIServer
from geventwebsocket.handler import WebSocketHandler

from hausbox.api.app import build_app
from hausbox.config import Config
from hausbox.engine import Engine

log = logging.getLogger("hausbox.server")

DRAIN_TIMEOUT_S = 10.0


def serve(config: Config) -> int:
    backlog = int(os.environ.get("HAUSBOX_WS_BACKLOG_BYTES") or 2 << 20)
    engine = Engine(config, ws_backlog_bytes=backlog)
    server = WSGIServer(
        (config.bind, config.port),
        build_app(engine),
        handler_class=WebSocketHandler,
        log=None,
        error_log=logging.getLogger("hausbox.http"),
    )
    stopping = Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, stopping.set)
    server.start()
    engine.start()
    advertiser = None
    if config.mdns:
        from hausbox.system.mdns import advertise

        advertiser = advertise(config.port)
    log.info("listening on %s:%d", config.bind, config.port)
    stopping.wait()
    log.info("shutting down: draining requests")
    if advertiser is not None:
        advertiser.close()
    engine.hub.stop()  # WebSockets never end by themselves: close them so the drain can finish
    server.stop(timeout=DRAIN_TIMEOUT_S)  # stop accepting; in-flight requests finish
    engine.stop()
    log.info("stopped")
    return 0
