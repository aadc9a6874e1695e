"""WSGI middleware around the REST app: the WebSocket endpoint, security headers and CORS."""

from __future__ import annotations

from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'self'"),
    ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
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


class HttpMiddleware:
    def __init__(self, app: WsgiApp, websocket: WsgiApp, cors_origins: Callable[[], Any]):
        self.app = app
        self.websocket = websocket
        self.cors_origins = cors_origins

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

        return self.app(environ, with_headers)
