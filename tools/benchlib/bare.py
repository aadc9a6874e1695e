"""The baseline of the mixed part: a bare bottle app on gevent's WSGI server, nothing of hausbox.

``python -m benchlib.bare --port P`` serves ``GET /api/v1/health`` with a small JSON body, with the
same stack as the service (gevent monkey-patched, pywsgi, bottle, ``TCP_NODELAY``) and no work
of its own, so the service's GET /health can be compared with what the stack alone costs.
Prints ``{"ready": port}`` once it listens.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402

import bottle  # noqa: E402
from gevent.pywsgi import WSGIHandler, WSGIServer  # noqa: E402


class NoDelayHandler(WSGIHandler):
    def __init__(self, sock, address, server, rfile=None):  # noqa: ANN001 - gevent's signature
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().__init__(sock, address, server, rfile)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = bottle.Bottle()
    body = json.dumps({"status": "ok", "version": "0", "uptime": 0}).encode()

    @app.get("/api/v1/health")
    def health() -> bytes:
        bottle.response.content_type = "application/json"
        return body

    server = WSGIServer(("127.0.0.1", args.port), app, handler_class=NoDelayHandler, log=None)
    server.start()
    print(json.dumps({"ready": args.port}), flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
