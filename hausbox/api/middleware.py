"""WSGI middleware around the REST app: the WebSocket endpoint, the web console, security headers and CORS."""

from __future__ import annotations

from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

from hausbox.console.serve import Console, is_console_path

# The same strict policy for the API and the console's pages: every script, style, image and
# connection (the WebSocket included) from the box itself, no inline script or style at all.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# A browser cannot set headers on a WebSocket: it offers this subprotocol and "bearer.<token>",
# and the server answers with this one (never echoing the token).
WEBSOCKET_PROTOCOL = "hausbox"
BEARER_PROTOCOL_PREFIX = "bearer."
CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type"

WsgiApp = Callable[[dict, Callable], Iterable[bytes]]


def origin_allowed(origin: str, configured: str | None) -> bool:
    """Localhost origins by default; ``http.corsOrigins`` (comma list, or ``*``) replaces that."""
    if configured and configured.strip():
        allowed = {item.strip().rstrip("/") for item in configured.split(",") if item.strip()}
        return "*" in allowed or origin.rstrip("/") in allowed
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    return host in LOCAL_HOSTS


def same_origin(origin: str, host: str | None) -> bool:
    """Whether a browser's ``Origin`` is the box itself, as the request's ``Host`` names it."""
    try:
        return bool(host) and urlsplit(origin).netloc.lower() == host.strip().lower()
    except ValueError:
        return False


def websocket_origin_allowed(environ: dict, configured: Any) -> bool:
    """No Origin (not a browser), the box's own pages, or an origin the CORS setting allows."""
    origin = environ.get("HTTP_ORIGIN")
    if not origin:
        return True
    return same_origin(origin, environ.get("HTTP_HOST")) or origin_allowed(origin, configured if isinstance(configured, str) else None)


def bearer_from_protocols(header: str) -> str | None:
    """The token a client offered as the ``bearer.<token>`` subprotocol, if any."""
    for offered in header.split(","):
        offered = offered.strip()
        if offered.startswith(BEARER_PROTOCOL_PREFIX) and len(offered) > len(BEARER_PROTOCOL_PREFIX):
            return offered[len(BEARER_PROTOCOL_PREFIX) :]
    return None


class HttpMiddleware:
    def __init__(self, app: WsgiApp, websocket: WsgiApp, cors_origins: Callable[[], Any], console: WsgiApp | None = None):
        self.app = app
        self.websocket = websocket
        self.cors_origins = cors_origins
        self.console = console if console is not None else Console()

    def app_protocol(self, path: str) -> str | None:
        """The subprotocol gevent-websocket answers with when the client offered it."""
        return WEBSOCKET_PROTOCOL if path == "/ws" else None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/ws":
            return self.websocket(environ, start_response)
        extra = list(SECURITY_HEADERS)
        origin = environ.get("HTTP_ORIGIN")
        if origin:
            extra.append(("Vary", "Origin"))
            configured = self.cors_origins()
            if origin_allowed(origin, configured if isinstance(configured, str) else None):
                extra += [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true")]
                if environ.get("REQUEST_METHOD") == "OPTIONS" and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
                    extra += [
                        ("Access-Control-Allow-Methods", CORS_METHODS),
                        ("Access-Control-Allow-Headers", CORS_HEADERS),
                        ("Access-Control-Max-Age", "600"),
                    ]
                    start_response("204 No Content", extra)
                    return [b""]
            elif environ.get("REQUEST_METHOD") == "OPTIONS":
                start_response("403 Forbidden", extra + [("Content-Type", "application/json")])
                return [b'{"error":"Origin not allowed"}']

        def with_headers(status: str, headers: list, exc_info: Any = None) -> Any:
            return start_response(status, headers + extra, exc_info)

        if is_console_path(environ.get("PATH_INFO") or "/"):
            return self.console(environ, with_headers)  # after CORS, before bottle: /api and /ws stay the engine's
        return self.app(environ, with_headers)
