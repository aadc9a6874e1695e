"""HTTP load with N concurrent keep-alive clients, a process of its own (its CPU is measured apart).

``python -m benchlib.restload --port P --token T --concurrency 8 --duration D --max-requests M
--requests JSON`` where JSON is a list of ``[method, path, body-or-null]`` taken in turn by every
client. Prints one JSON line: requests, status counts, requests/s, latency percentiles, bytes.
Raw sockets and a minimal HTTP/1.1 reader keep the client's cost per request small.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time

from benchlib.analysis import latency_ms


class Connection:
    def __init__(self, port: int):
        self.port = port
        self.sock: socket.socket | None = None
        self.buf = b""

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock, self.buf = sock, b""
        return sock

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buf:
            chunk = self.sock.recv(1 << 18)  # type: ignore[union-attr]
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        head, self.buf = self.buf.split(marker, 1)
        return head

    def _read_exactly(self, n: int) -> bytes:
        parts, have = [self.buf], len(self.buf)
        while have < n:
            chunk = self.sock.recv(max(1 << 18, n - have))  # type: ignore[union-attr]
            if not chunk:
                raise ConnectionError("closed")
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        self.buf = data[n:]
        return data[:n]

    def request(self, raw: bytes) -> tuple[int, int]:
        """Send one request, read the whole response: ``(status, body bytes)``."""
        sock = self.sock or self._open()
        try:
            sock.sendall(raw)
            head = self._read_until(b"\r\n\r\n")
        except (ConnectionError, OSError):
            sock = self._open()  # the server closed an idle keep-alive connection: once more
            sock.sendall(raw)
            head = self._read_until(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        size = 0
        if b"content-length" in headers:
            size = int(headers[b"content-length"])
            self._read_exactly(size)
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while True:
                chunk_size = int(self._read_until(b"\r\n").split(b";")[0], 16)
                self._read_exactly(chunk_size + 2)
                size += chunk_size
                if chunk_size == 0:
                    break
        if headers.get(b"connection", b"").lower() == b"close":
            sock.close()
            self.sock = None
        return status, size


def build(port: int, token: str, method: str, path: str, body: object) -> bytes:
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\n"
    if token:  # an empty token: an anonymous client
        head += f"Authorization: Bearer {token}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return (head + "\r\n").encode() + data


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--warmup", type=int, default=5, help="requests per client before measuring")
    parser.add_argument("--requests", required=True)
    args = parser.parse_args()
    watchdog = threading.Timer(args.duration + 120, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()
    specs = [build(args.port, args.token, m, p, b) for m, p, b in json.loads(args.requests)]

    lock = threading.Lock()
    state = {"issued": 0}
    latencies: list[list[float]] = [[] for _ in range(args.concurrency)]
    statuses: list[dict[int, int]] = [{} for _ in range(args.concurrency)]
    sizes = [0] * args.concurrency
    errors: list[str] = []
    window: dict[str, float] = {}

    def open_window() -> None:  # run once, by the last party to reach the barrier
        window["start"] = time.monotonic()
        window["end"] = window["start"] + args.duration

    start = threading.Barrier(args.concurrency + 1, action=open_window)

    def client(index: int) -> None:
        conn = Connection(args.port)
        turn = index
        try:
            for _ in range(args.warmup):
                conn.request(specs[turn % len(specs)])
                turn += 1
        except Exception as error:  # noqa: BLE001
            errors.append(f"warm-up: {error!r}")
        start.wait()
        deadline = window["end"]
        mine, codes = latencies[index], statuses[index]
        while True:
            with lock:
                if state["issued"] >= args.max_requests:
                    break
                state["issued"] += 1
            raw = specs[turn % len(specs)]
            turn += 1
            t0 = time.monotonic()
            if t0 >= deadline:
                break
            try:
                status, size = conn.request(raw)
            except Exception as error:  # noqa: BLE001
                errors.append(repr(error))
                codes[0] = codes.get(0, 0) + 1
                conn = Connection(args.port)
                continue
            mine.append(time.monotonic() - t0)
            codes[status] = codes.get(status, 0) + 1
            sizes[index] += size

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.concurrency)]
    for thread in threads:
        thread.start()
    start.wait()
    t_start = window["start"]
    for thread in threads:
        thread.join(args.duration + 60)
    elapsed = time.monotonic() - t_start
    merged: dict[str, int] = {}
    for codes in statuses:
        for code, n in codes.items():
            merged[str(code)] = merged.get(str(code), 0) + n
    all_latencies = [v for part in latencies for v in part]
    done = len(all_latencies)
    ok = sum(n for code, n in merged.items() if code.startswith("2"))
    print(
        json.dumps(
            {
                "requests": done,
                "ok": ok,
                "statuses": merged,
                "elapsed_s": round(elapsed, 2),
                "requests_per_s": round(done / elapsed, 1) if elapsed else None,
                "ok_per_s": round(ok / elapsed, 1) if elapsed else None,
                "latency": latency_ms(all_latencies),
                "mean_body_bytes": round(sum(sizes) / done) if done else None,
                "errors": errors[:5],
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
