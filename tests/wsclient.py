"""WebSocket test helpers: read raw frames (so close codes are seen exactly) and collect messages in a thread."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import websocket
from websocket import ABNF

SUBSCRIBE_SETTLE_S = 0.3  # the hub handles a subscribe message within a millisecond; no ack exists


@dataclass
class Frame:
    """One thing read from a socket: ``message`` (parsed JSON), ``close``, ``eof``, ``timeout`` or ``protocol-error``."""

    kind: str
    data: Any = None
    code: int | None = None
    reason: str = ""
    at: float = field(default_factory=time.monotonic)

    def __repr__(self) -> str:
        text = repr(self.data)
        text = text if len(text) <= 120 else f"{text[:120]}... ({len(text)} chars)"
        return f"Frame({self.kind}, code={self.code}, reason={self.reason!r}, data={text})"

    @property
    def is_end(self) -> bool:
        return self.kind in ("close", "eof", "protocol-error")


def read_frame(ws: websocket.WebSocket, timeout: float | None = 5.0) -> Frame:
    """The next frame, without websocket-client answering a close for us (that could hide the code)."""
    ws.settimeout(timeout)
    while True:
        try:
            frame = ws.recv_frame()
        except websocket.WebSocketTimeoutException:
            return Frame("timeout")
        except websocket.WebSocketProtocolException as error:  # e.g. an invalid close status code
            return Frame("protocol-error", data=str(error))
        except (websocket.WebSocketConnectionClosedException, ConnectionError, OSError) as error:
            return Frame("eof", data=repr(error))
        if frame is None:
            return Frame("eof")
        if frame.opcode == ABNF.OPCODE_TEXT:
            assert frame.fin, "the hub sends every message as one frame"
            return Frame("message", data=json.loads(frame.data.decode("utf-8")))
        if frame.opcode == ABNF.OPCODE_CLOSE:
            payload = frame.data or b""
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            return Frame("close", code=code, reason=payload[2:].decode("utf-8", "replace"))
        if frame.opcode in (ABNF.OPCODE_PING, ABNF.OPCODE_PONG):
            continue
        return Frame("protocol-error", data=f"unexpected opcode {frame.opcode}")


def connect(ws_url: str, token: str, **kwargs: Any) -> websocket.WebSocket:
    return websocket.create_connection(f"{ws_url}?token={token}", timeout=10, **kwargs)


def expect_welcome(ws: websocket.WebSocket) -> dict[str, Any]:
    frame = read_frame(ws)
    assert frame.kind == "message", frame
    assert isinstance(frame.data, dict) and frame.data.get("type") == "connected", frame.data
    return frame.data


def subscribe(ws: websocket.WebSocket, *topics: str, settle: bool = True) -> None:
    ws.send(json.dumps({"type": "subscribe", "topics": list(topics)}))
    if settle:
        time.sleep(SUBSCRIBE_SETTLE_S)


def events_in(message: Any) -> list[dict[str, Any]]:
    """The events a message carries: a batch (array) or a lone event (object)."""
    return list(message) if isinstance(message, list) else [message]


class Collector:
    """Reads one socket continuously in a daemon thread and keeps every frame with its arrival time."""

    def __init__(self, ws: websocket.WebSocket, name: str = "collector"):
        self.ws = ws
        self.frames: list[Frame] = []
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            frame = read_frame(self.ws, timeout=0.5)
            if frame.kind == "timeout":
                continue
            with self._cond:
                self.frames.append(frame)
                self._cond.notify_all()
            if frame.is_end:
                return

    # ---- views -------------------------------------------------------------------------------
    def messages(self) -> list[Any]:
        with self._cond:
            return [f.data for f in self.frames if f.kind == "message"]

    def timed_messages(self) -> list[tuple[float, Any]]:
        with self._cond:
            return [(f.at, f.data) for f in self.frames if f.kind == "message"]

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        found = [e for m in self.messages() for e in events_in(m)]
        return [e for e in found if event_type is None or e.get("type") == event_type]

    def end(self) -> Frame | None:
        with self._cond:
            return next((f for f in self.frames if f.is_end), None)

    def mark(self) -> int:
        """An index into the frames so far, to look only at what arrives after it."""
        with self._cond:
            return len(self.frames)

    def messages_since(self, mark: int) -> list[Any]:
        with self._cond:
            return [f.data for f in self.frames[mark:] if f.kind == "message"]

    # ---- waiting -----------------------------------------------------------------------------
    def wait_for(self, predicate: Callable[["Collector"], Any], timeout: float = 3.0) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                self._cond.release()
                try:
                    value = predicate(self)
                finally:
                    self._cond.acquire()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"condition not met within {timeout} s; frames: {self.frames[-10:]!r}")
                self._cond.wait(min(remaining, 0.05))

    def wait_end(self, timeout: float) -> Frame:
        return self.wait_for(lambda c: c.end(), timeout)

    def close(self) -> None:
        self._stop = True
        try:
            if self.ws.sock is not None:
                self.ws.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._thread.join(2)
        self.ws.shutdown()


def settings_events_with(collector: Collector, key: str) -> list[dict[str, Any]]:
    return [e for e in collector.events("settings.changed") if key in e.get("keys", ())]
