"""A rude local HTTP(S) server in a thread, playing the Telegram Bot API, a webhook target or a push
service: it records every request and answers from a script (a status, ``"hang"`` to answer
nothing for ``hang_s``, ``"close"`` to drop the connection), then ``default``."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class FakeHttp:
    def __init__(self, tls_dir: Path | None = None, hang_s: float = 3.0, default: int = 200, reply: bytes = b'{"ok": true}'):
        self.received: list[Received] = []
        self.answers: list[Any] = []
        self.default = default
        self.hang_s = hang_s
        self.reply = reply
        self.cert_path: Path | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.received.append(Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic()))
                answer = fake.answers.pop(0) if fake.answers else fake.default
                if answer == "hang":
                    time.sleep(fake.hang_s)
                    answer = fake.default
                if answer == "close":
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(answer)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(fake.reply)))
                self.end_headers()
                self.wfile.write(fake.reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls_dir is not None:
            self.cert_path = self._self_signed(tls_dir)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.cert_path, tls_dir / "key.pem")
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def _self_signed(tls_dir: Path) -> Path:
        tls_dir.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )  # fmt: skip
        (tls_dir / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        path = tls_dir / "cert.pem"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return path
