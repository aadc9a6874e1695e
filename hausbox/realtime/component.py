"""The WebSocket hub: a view of the bus, batched per client."""

from hausbox.api.middleware import websocket_origin_allowed
from hausbox.core.components import Component
from hausbox.realtime.hub import WebSocketHub


def setup(engine) -> None:  # noqa: ANN001
    engine.hub = WebSocketHub(
        engine.bus,
        engine.auth,
        max_backlog_bytes=engine.config.ws_backlog_bytes,
        origin_allowed=lambda environ: websocket_origin_allowed(environ, engine.settings.get("http.corsOrigins")),
    )


COMPONENT = Component(
    name="realtime",
    requires=("auth",),
    setup=setup,
    start=lambda engine: engine.hub.start(),
    disconnect=lambda engine: engine.hub.stop(),  # sockets never end by themselves
)
