"""The mixed part: one core shared by requests, sockets and messages at once.

1. the stack alone: a bare bottle + gevent server (``benchlib.bare``), one keep-alive client on
   GET /health, beside the service's GET /health without a token and its authenticated GET /zones;
2. GET /health with 8, then 64 keep-alive clients: the tail says whether connections take turns;
3. 1,000 messages/s from the 500 sensors while 8 clients pull GET /zones as fast as they can:
   MQTT -> WebSocket latency, values superseded, and the GET /zones tail meanwhile;
4. a quiet house, 2 messages/s: a lone event's MQTT -> WebSocket latency.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Protocol

from benchlib import ws
from benchlib.analysis import EventCollector
from benchlib.home import Decoder
from benchlib.mosquitto import free_port
from benchlib.procs import CpuMeter, Helper, Service, log


class Bench(Protocol):
    """What this part uses of the run (``benchlib.main.Bench``)."""

    plan: Any
    service: Service | None
    token: str
    workdir: Path
    helpers: list[Helper]
    device_index: dict[str, int]

    def next_seq(self) -> int: ...
    def http_load(self, requests_: list[list[Any]], concurrency: int, duration: float, token: str | None = None, port: int | None = None) -> dict[str, Any]: ...
    def start_http_load(self, requests_: list[list[Any]], concurrency: int, duration: float, token: str | None = None, port: int | None = None) -> tuple[Helper, CpuMeter]: ...
    def finish_http_load(self, helper: Helper, meter: CpuMeter, duration: float) -> dict[str, Any]: ...
    def pipeline_step(self, rate: int, duration: float, tag: str, collector: EventCollector, listener: ws.Listener) -> dict[str, Any]: ...

HEALTH = [["GET", "/api/v1/health", None]]
ZONES = [["GET", "/api/v1/zones", None]]
FLOOD_RATE = 1000
ROUNDS = 3
QUIET_RATE = 2

BAR = {
    "health_vs_bare_1_client": 0.85,
    "zones_authenticated_vs_health_1_client": 0.80,
    "health_8_clients_p99_ms": 10,
    "health_64_clients_p99_ms": 50,
    "flood_ws_p99_ms": 250,
    "flood_zones_p99_ms": 100,
    "quiet_ws_p50_ms": 5,
}


def run(bench: Bench) -> dict[str, Any]:
    plan = bench.plan
    assert bench.service
    seconds = plan.rest_s
    out: dict[str, Any] = {}

    port = free_port()
    bare = Helper("bare", ["--port", str(port)], bench.workdir / "bare.log")
    bench.helpers.append(bare)
    bare.receive(30)
    # One client each, in turns, the best of ROUNDS: the ratios compare runs made seconds apart on a
    # machine whose speed drifts (a shared VM), so each side gets its best moment.
    runs: dict[str, list[dict[str, Any]]] = {"bare_health_1_client": [], "health_1_client": [], "zones_authenticated_1_client": []}
    try:
        for _ in range(ROUNDS):
            runs["bare_health_1_client"].append(bench.http_load(HEALTH, 1, seconds / ROUNDS, token="", port=port))
            runs["health_1_client"].append(bench.http_load(HEALTH, 1, seconds / ROUNDS, token=""))
            runs["zones_authenticated_1_client"].append(bench.http_load(ZONES, 1, seconds / ROUNDS))
    finally:
        bare.close()
        bench.helpers.remove(bare)
    for name, taken in runs.items():
        out[name] = {**max(taken, key=lambda run: run.get("ok_per_s") or 0), "ok_per_s_of_each_round": [run.get("ok_per_s") for run in taken]}
    out["health_8_clients"] = bench.http_load(HEALTH, 8, seconds, token="")
    out["health_64_clients"] = bench.http_load(HEALTH, 64, seconds, token="")

    collector = EventCollector(Decoder(bench.device_index, bench.next_seq()))
    listener = ws.Listener([ws.connect(bench.service.port, bench.token, ["devices", "equipments", "zones"])], collector.on_frame)
    thread = threading.Thread(target=listener.run, args=(time.monotonic() + 600,), daemon=True)
    thread.start()
    time.sleep(0.5)
    try:
        helper, meter = bench.start_http_load(ZONES, 8, plan.mixed_s + 2)
        time.sleep(1.0)  # the clients are pulling
        flood = bench.pipeline_step(FLOOD_RATE, plan.mixed_s, f"mixed-{FLOOD_RATE}", collector, listener)
        flood["zones_8_clients_meanwhile"] = bench.finish_http_load(helper, meter, plan.mixed_s + 2)
        out["flood"] = flood
        out["quiet"] = bench.pipeline_step(QUIET_RATE, plan.quiet_s, f"quiet-{QUIET_RATE}", collector, listener)
    finally:
        listener.stop()
        thread.join(3)
        listener.close()

    figures = summary(out)
    log("mixed: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    return {
        "method": (
            f"HTTP loads as in the rest part (keep-alive clients in a process of their own; GET /health without a token, GET "
            f"/zones with the API token). One client: bare, /health and /zones in turns, {ROUNDS} rounds of "
            f"{seconds / ROUNDS:.0f} s, the best round of each; 8 and 64 clients: {seconds:.0f} s. The bare server is bottle on gevent's pywsgi with TCP_NODELAY and "
            f"nothing else, started for its own run. Flood: {FLOOD_RATE} messages/s for {plan.mixed_s:.0f} s as in a pipeline step "
            f"(one WebSocket client on devices, equipments, zones) while 8 clients pull GET /zones back to back; superseded "
            f"counts messages whose value never reached the client as such (a newer value of the same stream came in the same "
            f"batch). Quiet: {QUIET_RATE} messages/s for {plan.quiet_s:.0f} s."
        ),
        "figures": figures,
        **out,
    }


def summary(out: dict[str, Any]) -> dict[str, Any]:
    def rate(name: str) -> float | None:
        return (out.get(name) or {}).get("ok_per_s")

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 2) if a and b else None

    flood = out.get("flood") or {}
    return {
        "health_vs_bare_1_client": ratio(rate("health_1_client"), rate("bare_health_1_client")),
        "zones_authenticated_vs_health_1_client": ratio(rate("zones_authenticated_1_client"), rate("health_1_client")),
        "health_8_clients_p99_ms": (out.get("health_8_clients") or {}).get("latency", {}).get("p99_ms"),
        "health_64_clients_p99_ms": (out.get("health_64_clients") or {}).get("latency", {}).get("p99_ms"),
        "flood_ws_p99_ms": flood.get("latency", {}).get("p99_ms"),
        "flood_superseded": flood.get("superseded_in_batch"),
        "flood_lost": flood.get("lost"),
        "flood_zones_p99_ms": (flood.get("zones_8_clients_meanwhile") or {}).get("latency", {}).get("p99_ms"),
        "flood_zones_per_s": (flood.get("zones_8_clients_meanwhile") or {}).get("ok_per_s"),
        "quiet_ws_p50_ms": (out.get("quiet") or {}).get("latency", {}).get("p50_ms"),
    }


def bar(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The mixed part's rows of the bar (none when the part did not run)."""
    figures = (result.get("mixed") or {}).get("figures")
    if not figures:
        return []
    rows = []
    for name, target in BAR.items():
        value = figures.get(name)
        at_least = name.startswith(("health_vs", "zones_auth"))
        ok = None if value is None else (value >= target if at_least else value <= target)
        if name == "flood_ws_p99_ms" and ok:
            ok = not figures.get("flood_superseded") and not figures.get("flood_lost")
        rows.append({"name": f"mixed: {name}", "target": f"{'>=' if at_least else '<='} {target}", "value": value, "pass": ok})
    return rows
