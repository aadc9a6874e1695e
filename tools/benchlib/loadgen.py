"""The zigbee2mqtt-shaped load generator, a process of its own so that its CPU is measured apart.

Run as ``python -m benchlib.loadgen --port P --workdir W [--base zigbee2mqtt] [--max-seconds S]``
and driven by JSON lines on stdin, one answer line per command on stdout:

- ``{"cmd": "bridge"}``: publish the retained ``<base>/bridge/devices`` of the synthetic home;
- ``{"cmd": "initial"}``: publish every device's initial state (values outside the load's cycles);
- ``{"cmd": "run", "rate": R, "duration": D, "tag": T}``: publish ``R*D`` load messages, paced at
  ``R`` per second, continuing the global sequence; the publish time (``time.monotonic()``, the
  same clock in every process) of each message goes to ``W/T.times`` (float64, one per message);
  with ``"stoppable": true`` the run ends early when ``{"cmd": "stop"}`` arrives (then its answer);
- ``{"cmd": "seq"}``: the next sequence number; ``{"cmd": "quit"}``.

The paho client runs without its network thread: a QoS 0 publish is written to the socket at once.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import threading
import time
from array import array
from pathlib import Path

import paho.mqtt.client as mqtt

from benchlib import home


class LoadGenerator:
    def __init__(self, port: int, base: str, workdir: Path, n_devices: int):
        self.base = base
        self.workdir = workdir
        self.n_devices = n_devices
        self.seq = 0
        self.quit_requested = False
        self.topics = [f"{base}/{home.name(d)}" for d in range(n_devices)]
        self.connected = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-load-{os.getpid()}", clean_session=True)
        client.on_connect = lambda *_args: self.connected.set()
        client.max_queued_messages_set(0)
        client.connect("127.0.0.1", port, keepalive=60)
        deadline = time.monotonic() + 10
        while not self.connected.is_set():
            client.loop(0.1)
            if time.monotonic() > deadline:
                raise RuntimeError("load generator: no CONNACK from the broker")
        self.client = client

    def _flush(self, timeout: float = 10.0) -> None:
        """Let paho write what it still holds (a full socket buffer leaves data queued)."""
        deadline = time.monotonic() + timeout
        while self.client.want_write() and time.monotonic() < deadline:
            self.client.loop(0.01)

    def bridge(self) -> dict:
        info = self.client.publish(f"{self.base}/bridge/devices", home.bridge_devices(self.n_devices), qos=1, retain=True)
        deadline = time.monotonic() + 10
        while not info.is_published() and time.monotonic() < deadline:
            self.client.loop(0.05)
        return {"published": info.is_published()}

    def initial(self) -> dict:
        for d in range(self.n_devices):
            self.client.publish(self.topics[d], home.initial_state(d), qos=0)
            if d % 50 == 49:
                self._flush()
                time.sleep(0.01)
        self._flush()
        return {"count": self.n_devices}

    def run(self, rate: float, duration: float, tag: str, stdin: "LineReader | None" = None) -> dict:
        total = max(1, int(round(rate * duration)))
        times = array("d")
        first = self.seq
        errors = 0
        max_lag = 0.0
        publish, state, topics, monotonic = self.client.publish, home.state, self.topics, time.monotonic
        n = self.n_devices
        t0 = monotonic()
        next_loop = t0 + 0.05
        i = 0
        while i < total:
            now = monotonic()
            due = min(total, int((now - t0) * rate) + 1)
            if due > i:
                max_lag = max(max_lag, now - (t0 + i / rate))
            while i < due:
                d, payload = state(self.seq, n)
                t = monotonic()
                if publish(topics[d], payload, qos=0).rc != mqtt.MQTT_ERR_SUCCESS:
                    errors += 1
                times.append(t)
                self.seq += 1
                i += 1
            now = monotonic()
            if now >= next_loop:
                self.client.loop(0)  # keep-alive, and write what a full socket left queued
                next_loop = now + 0.05
            if i < total:
                wait = t0 + i / rate - monotonic()
                if wait > 0:
                    if stdin is not None:
                        # A long run can be ended early: {"cmd": "stop"} on stdin.
                        line = stdin.readline(max(wait, 0.001))
                        if line is not None:
                            command = json.loads(line).get("cmd") if line.strip() else "quit"  # "": end of input
                            if command in ("stop", "quit"):
                                total = i
                                self.quit_requested = command == "quit"
                    else:
                        time.sleep(max(wait, 0.001))
        elapsed = monotonic() - t0
        self._flush()
        path = self.workdir / f"{tag}.times"
        with open(path, "wb") as f:
            times.tofile(f)
        return {
            "tag": tag, "first_seq": first, "count": total, "elapsed": elapsed, "offered_per_s": total / elapsed if elapsed else None,
            "times_file": str(path), "publish_errors": errors, "max_lag_ms": round(max_lag * 1000, 1),
        }  # fmt: skip


class LineReader:
    """Lines from a file descriptor, with a timeout (select on the raw descriptor, own buffer)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def readline(self, timeout: float | None) -> str | None:
        """The next line; None when none came within ``timeout``; "" at end of input."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if self.eof:
                return ""
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
                continue
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--base", default=home.BASE_TOPIC)
    parser.add_argument("--devices", type=int, default=home.N_DEVICES)
    parser.add_argument("--max-seconds", type=float, default=900)
    args = parser.parse_args()
    # Never outlive the bench, whatever happens to it.
    watchdog = threading.Timer(args.max_seconds, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()
    gen = LoadGenerator(args.port, args.base, args.workdir, args.devices)
    stdin = LineReader(sys.stdin.fileno())
    while True:
        line = stdin.readline(None)
        if not line:
            break
        command = json.loads(line)
        name = command.get("cmd")
        if name == "quit":
            break
        if name == "stop":
            continue  # the run it was meant to end had already ended (and answered)
        try:
            if name == "bridge":
                answer = gen.bridge()
            elif name == "initial":
                answer = gen.initial()
            elif name == "run":
                answer = gen.run(float(command["rate"]), float(command["duration"]), str(command["tag"]), stdin if command.get("stoppable") else None)
            elif name == "seq":
                answer = {"next_seq": gen.seq}
            else:
                answer = {"error": f"unknown command {name!r}"}
        except Exception as error:  # noqa: BLE001 - the bench reads the reason
            answer = {"error": repr(error)}
        print(json.dumps(answer), flush=True)
        if gen.quit_requested:
            break
    gen.client.disconnect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
