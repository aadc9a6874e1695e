"""Many WebSocket clients in one process (apart from the bench), for the fan-out measurement.

``python -m benchlib.fanout --port P --token T --clients 50 --start-seq S --index FILE --out FILE``

Connects every client (subscribed to devices, equipments, zones), prints ``{"ready": n}``, then
reads until ``{"cmd": "stop"}`` arrives on stdin and writes its findings to ``--out`` (JSON):
client 0 decodes every frame (the reference); every other client records each frame's CRC-32,
length and receipt time. The hub sends one encoded batch to every client of the same
subscription, so a client received everything client 0 did exactly when it holds the same frames.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import zlib
from pathlib import Path

from benchlib import ws
from benchlib.analysis import EventCollector
from benchlib.home import Decoder


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--start-seq", type=int, required=True)
    parser.add_argument("--index", type=Path, required=True, help="JSON {deviceId: device number}")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-seconds", type=float, default=600)
    args = parser.parse_args()
    watchdog = threading.Timer(args.max_seconds, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()

    decoder = Decoder(json.loads(args.index.read_text()), args.start_seq)
    reference = EventCollector(decoder, keep_frames=True)
    others: list[list[tuple[int, int, float]]] = [[] for _ in range(args.clients)]

    def on_frame(index: int, t: float, payload: bytes) -> None:
        if index == 0:
            reference.on_frame(index, t, payload)
            reference.frames[-1] = (*reference.frames[-1], t)  # type: ignore[assignment]
        else:
            others[index].append((zlib.crc32(payload), len(payload), t))

    connections = [ws.connect(args.port, args.token, ["devices", "equipments", "zones"]) for _ in range(args.clients)]
    listener = ws.Listener(connections, on_frame)
    thread = threading.Thread(target=listener.run, args=(time.monotonic() + args.max_seconds,), daemon=True)
    thread.start()
    time.sleep(0.5)  # the hub applies a subscription within a millisecond; no acknowledgement exists
    print(json.dumps({"ready": len(connections)}), flush=True)
    for line in sys.stdin:
        if json.loads(line).get("cmd") == "stop":
            break
    listener.stop()
    thread.join(5)
    listener.close()
    result = {
        "reference_frames": [list(f) for f in reference.frames],  # [crc, length, seqs, time]
        "reference_counts": reference.counts,
        "clients": [
            {"frames": listener.frames[i], "bytes": listener.bytes[i], "closed": listener.closed[i], "received": others[i] if i else None}
            for i in range(args.clients)
        ],
    }
    args.out.write_text(json.dumps(result))
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
