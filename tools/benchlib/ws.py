"""A small WebSocket client for measuring: raw sockets, one thread for any number of connections.

Each connection's bytes are timestamped (``time.monotonic()``) as soon as ``recv`` returns them, and
a message's receipt time is that of the ``recv`` that completed it. Frames are handed to a callback
``on_frame(client_index, receipt_time, payload_bytes)``; the welcome object is skipped.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import socket
import struct
import time
from typing import Callable

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame."""
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


class Parser:
    """Incremental frame parser for one connection (server frames are not masked)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.fragments: list[bytes] = []
        self.fragment_opcode = 0

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self.buf += data
        out = []
        buf = self.buf
        while True:
            if len(buf) < 2:
                break
            b0, b1 = buf[0], buf[1]
            n = b1 & 0x7F
            pos = 2
            if n == 126:
                if len(buf) < 4:
                    break
                n = struct.unpack_from("!H", buf, 2)[0]
                pos = 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n = struct.unpack_from("!Q", buf, 2)[0]
                pos = 10
            mask = None
            if b1 & 0x80:
                if len(buf) < pos + 4:
                    break
                mask = bytes(buf[pos : pos + 4])
                pos += 4
            if len(buf) < pos + n:
                break
            payload = bytes(buf[pos : pos + n])
            del buf[: pos + n]
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode, fin = b0 & 0x0F, b0 & 0x80
            if opcode == OP_CONT or (not fin and opcode in (OP_TEXT, OP_BINARY)):
                if opcode != OP_CONT:
                    self.fragment_opcode = opcode
                self.fragments.append(payload)
                if fin:
                    out.append((self.fragment_opcode, b"".join(self.fragments)))
                    self.fragments = []
                continue
            out.append((opcode, payload))
        return out


def connect(port: int, token: str, topics: list[str], timeout: float = 10.0) -> tuple[socket.socket, bytes]:
    """Open ``/ws?token=``, send the subscription; returns the socket and bytes already read."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /ws?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    sock.sendall(request.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("WebSocket handshake: connection closed")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    status = head.split(b"\r\n", 1)[0]
    if b" 101" not in status:
        raise ConnectionError(f"WebSocket handshake refused: {status.decode(errors='replace')}")
    sock.sendall(frame(OP_TEXT, json.dumps({"type": "subscribe", "topics": topics}).encode()))
    return sock, rest


class Listener:
    """Reads every connection until ``stop()``; counts frames, bytes and closes per connection."""

    def __init__(self, connections: list[tuple[socket.socket, bytes]], on_frame: Callable[[int, float, bytes], None]):
        self.on_frame = on_frame
        self.socks = [sock for sock, _rest in connections]
        self.parsers = [Parser() for _ in connections]
        self.pending = [rest for _sock, rest in connections]
        self.frames = [0] * len(connections)
        self.bytes = [0] * len(connections)
        self.closed: list[str | None] = [None] * len(connections)
        self.welcomed = [False] * len(connections)
        self._stop = False

    def stop(self) -> None:
        self._stop = True

    def _handle(self, index: int, t: float, data: bytes) -> None:
        self.bytes[index] += len(data)
        for opcode, payload in self.parsers[index].feed(data):
            if opcode == OP_TEXT:
                if not self.welcomed[index] and payload[:1] == b"{":
                    self.welcomed[index] = True  # {"type": "connected", ...}
                    continue
                self.frames[index] += 1
                self.on_frame(index, t, payload)
            elif opcode == OP_PING:
                try:
                    self.socks[index].sendall(frame(OP_PONG, payload))
                except OSError:
                    pass
            elif opcode == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.closed[index] = f"close {code} {payload[2:].decode(errors='replace')}".strip()

    def run(self, deadline: float) -> None:
        sel = selectors.DefaultSelector()
        for index, sock in enumerate(self.socks):
            sock.setblocking(False)
            sel.register(sock, selectors.EVENT_READ, index)
            if self.pending[index]:
                self._handle(index, time.monotonic(), self.pending[index])
        try:
            while not self._stop and time.monotonic() < deadline:
                for key, _mask in sel.select(0.1):
                    index = key.data
                    try:
                        data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError as error:
                        data = b""
                        self.closed[index] = self.closed[index] or f"error {error}"
                    t = time.monotonic()
                    if not data:
                        self.closed[index] = self.closed[index] or "eof"
                        sel.unregister(key.fileobj)
                        continue
                    self._handle(index, t, data)
        finally:
            sel.close()

    def close(self) -> None:
        for sock in self.socks:
            try:
                sock.setblocking(True)
                sock.settimeout(0.5)
                sock.sendall(frame(OP_CLOSE, struct.pack("!H", 1000)))
            except OSError:
                pass
            try:
                sock.close()
            except OSError:
                pass
