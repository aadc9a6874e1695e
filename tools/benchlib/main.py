"""``tools/bench``: the service measured end to end, real processes only; one JSON document out.

Order of a run (each part can be chosen with ``--only``; the home is always built first):

1. setup: mosquitto, the service on a fresh data directory, the first admin and an API token, the
   zigbee2mqtt integration pointed at the broker, the retained device list of 500 devices, their
   initial states, 30 zones and 300 equipments; with the disk part, a second service built the
   same way (its own data directory and base topic) that gets 10 messages/s until the end;
2. pipeline: load steps of increasing rate, then a 30 s confirmation of the best passing rate;
3. fanout: 50 WebSocket clients at 500 messages/s;
4. rest: 8 concurrent clients per endpoint, then sequential orders timed to the MQTT /set message;
   mixed: requests, sockets and messages at once (``benchlib/mixed.py``);
5. memory_startup: RSS after the load (topped up to 5 minutes), a clean stop, a restart on the
   same database (time to healthy, to the first device message), idle RSS;
6. disk: the second service's bytes written at 10 messages/s over the whole run; the main
   service's database growth per message, extrapolated to a week;
7. history: the history store on its own, in this process (``benchlib/history.py``).

Every figure says how it was obtained in a ``method`` field next to it.
"""

from __future__ import annotations

import argparse
import compileall
import http.client
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from benchlib import analysis, history, home, mixed, ws
from benchlib.analysis import EventCollector, load_times, step_report
from benchlib.api import Api, first_admin, wait_until
from benchlib.disk import DiskWatch
from benchlib.home import Decoder
from benchlib.monitor import Monitor
from benchlib.procs import ROOT, Broker, CpuMeter, Helper, Service, db_logical_bytes, dir_bytes, log, rss_mb, status_kb
from benchlib.setup import Instance, build_home, start_instance

PARTS = ("pipeline", "fanout", "rest", "mixed", "memory_startup", "disk", "history")
ALIASES = {"memory": "memory_startup", "startup": "memory_startup", "fan-out": "fanout", "fan_out": "fanout"}
TOPICS = ["devices", "equipments", "zones"]
WEEK_MESSAGES_AT_10 = 10 * 7 * 24 * 3600
DISK_BASE_TOPIC = "bench-disk"
STARTUP_WAIT_S = 30.0

BAR = {
    "sustained_msgs_per_s": 4000,
    "p99_ms_at_2000": 250,
    "idle_rss_mb": 80,
    "startup_to_healthy_s": 1.5,
    "zones_req_per_s": 2000,
    "devices_req_per_s": 400,
    "order_round_trip_p99_ms": 50,
    "written_mb_per_hour_at_10": 2,
}


class Plan:
    """Durations of a full run (under 10 minutes on 2 cores) or of a ``--quick`` smoke run."""

    def __init__(self, quick: bool):
        self.quick = quick
        self.budget_s = 300 if quick else 720  # soft: parts that no longer fit are skipped
        # Up to the first failing step: on a fast day 6000 msg/s took half a core, so the ceiling lies above.
        self.steps = [500, 2000, 4000] if quick else [500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000, 12000, 16000, 20000]
        self.step_s = 3.0 if quick else 10.0
        self.confirm_s = 6.0 if quick else 30.0
        self.settle_max_s = 10.0 if quick else 30.0  # after a step, until 1 s without device events
        self.fanout_clients = 50
        self.fanout_rate = 500
        self.fanout_s = 15.0 if quick else 120.0
        self.rest_s = 2.0 if quick else 6.0
        self.mixed_s = 5.0 if quick else 15.0  # messages while clients pull
        self.quiet_s = 5.0 if quick else 15.0  # 2 messages/s
        self.round_trips = 40 if quick else 200
        self.load_target_s = 0.0 if quick else 300.0  # "RSS after 5 minutes of load"
        self.topup_rate = 1000
        self.idle_settle_s = 3.0 if quick else 5.0
        self.disk_observe_s = 20.0 if quick else 330.0  # the disk service runs at least this long


class Bench:
    def __init__(self, plan: Plan, parts: set[str], keep: bool):
        self.plan = plan
        self.parts = parts
        self.keep = keep
        self.t0 = time.monotonic()
        self.workdir = Path(tempfile.mkdtemp(prefix="hausbox-bench-"))
        self.result: dict[str, Any] = {
            "tool": "hausbox tools/bench",
            "mode": "quick" if plan.quick else "full",
            "parts": sorted(parts, key=PARTS.index),
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        self.errors: list[dict[str, str]] = []
        self.broker: Broker | None = None
        self.service: Service | None = None
        self.loadgen: Helper | None = None
        self.monitor: Monitor | None = None
        self.api: Api | None = None
        self.token = ""
        self.device_index: dict[str, int] = {}  # device id -> device number
        self.equipments: list[dict[str, Any]] = []  # {id, type, device}
        self.load_s = 0.0  # load the main service has been under so far
        self.size_after_setup: dict[str, int] = {}
        self.db_after_setup: dict[str, int] = {}
        self.helpers: list[Helper] = []
        self.instances: list[Instance] = []
        self.main: Instance | None = None
        self.disk_watch: DiskWatch | None = None
        self.idle_rss_after_setup: float | None = None

    # ---- helpers -----------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.plan.budget_s - self.elapsed()

    def pids(self, **extra: int | None) -> dict[str, int | None]:
        return {
            "service": self.service.pid if self.service else None,
            "broker": self.broker.pid if self.broker else None,
            "load_generator": self.loadgen.pid if self.loadgen else None,
            **extra,
        }

    def next_seq(self) -> int:
        assert self.loadgen
        self.loadgen.send({"cmd": "seq"})
        return self.loadgen.receive(10)["next_seq"]

    def load(self, rate: float, duration: float, tag: str, while_waiting: Callable[[], None] | None = None, interval: float = 1.0) -> dict[str, Any]:
        """One paced load run; ``while_waiting`` is called about every ``interval`` s meanwhile."""
        assert self.loadgen
        self.loadgen.send({"cmd": "run", "rate": rate, "duration": duration, "tag": tag})
        deadline = time.monotonic() + duration + 60
        while True:
            try:
                answer = self.loadgen.receive(interval)
                break
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
                if while_waiting:
                    while_waiting()
        if "error" in answer:
            raise RuntimeError(f"load generator: {answer['error']}")
        return answer

    def part(self, name: str, need_s: float, body: Callable[[], dict[str, Any]], always: bool = False) -> None:
        if name not in self.parts:
            return
        if self.left() < need_s and not always:
            self.result[name] = {"skipped": f"time budget: {self.left():.0f} s left, about {need_s:.0f} s needed"}
            log(f"{name}: skipped (time budget)")
            return
        log(f"{name}: start ({self.elapsed():.0f} s into the run)")
        try:
            self.result[name] = body()
        except Exception as error:  # noqa: BLE001 - a failed part is reported, the others still run
            log(f"{name}: FAILED: {error!r}")
            self.errors.append({"part": name, "error": repr(error), "trace": traceback.format_exc()[-1500:]})
            self.result.setdefault(name, {})["error"] = repr(error)
            if self.service and not self.service.alive():
                self.errors.append({"part": name, "error": "service died", "log": self.service.output()})

    # ---- the run -----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        try:
            self.result["machine"] = machine_info()
            self.setup()
            self.part("pipeline", 30, self.pipeline)
            self.part("fanout", self.plan.fanout_s + 20, self.fanout)
            self.part("rest", 6 * self.plan.rest_s + 15, self.rest)
            self.part("mixed", self.mixed_need_s(), lambda: mixed.run(self))
            self.part("memory_startup", 25, self.memory_startup)
            self.part("disk", 5, self.disk, always=True)
            self.part("history", 30, history.run, always=True)  # in this process, once the services are stopped
        except Exception as error:  # noqa: BLE001
            log(f"run aborted: {error!r}")
            self.errors.append({"part": "setup", "error": repr(error), "trace": traceback.format_exc()[-2000:]})
            if self.service is not None:
                self.errors[-1]["service_log"] = self.service.output(2000)
        finally:
            self.cleanup()
        self.result["bar"] = bar(self.result)
        self.result["bar_summary"] = {
            "passed": sum(1 for b in self.result["bar"] if b["pass"] is True),
            "failed": sum(1 for b in self.result["bar"] if b["pass"] is False),
            "not_measured": sum(1 for b in self.result["bar"] if b["pass"] is None),
        }
        self.result["errors"] = self.errors
        self.result["duration_s"] = round(self.elapsed(), 1)
        self.result["machine"]["loadavg_end"] = os.getloadavg()
        return self.result

    def cleanup(self) -> None:
        for helper in self.helpers:
            helper.close(5)
        for instance in self.instances:
            try:
                instance.loadgen.send({"cmd": "quit"})
            except OSError:
                pass
            instance.loadgen.close(5)
            instance.service.kill()
        if self.monitor:
            self.monitor.close()
        if self.broker:
            self.broker.stop()
        if self.keep:
            log(f"work directory kept: {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # ---- 1. setup ----------------------------------------------------------------------------
    def setup(self) -> None:
        # As installed on the appliance (pip compiles a wheel's modules): without bytecode, and with
        # PYTHONDONTWRITEBYTECODE set as on this machine, every start compiles hausbox again (~0.25 s).
        compileall.compile_dir(str(ROOT / "hausbox"), quiet=1)
        self.broker = Broker(self.workdir / "mosquitto").start()
        self.result["machine"]["mosquitto"] = self.broker.version()
        self.monitor = Monitor(self.broker.port, home.BASE_TOPIC)
        main = start_instance("main", home.BASE_TOPIC, self.broker, self.workdir, self.plan.budget_s + 120)
        self.instances.append(main)
        disk = None
        if "disk" in self.parts:
            disk = start_instance("disk", DISK_BASE_TOPIC, self.broker, self.workdir, self.plan.budget_s + 120)
            self.instances.append(disk)
        # Both homes are built at once: most of the time goes to waiting on the service.
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(build_home, instance, self.broker, self.plan.idle_settle_s) for instance in (main, disk) if instance]
            for future in futures:
                future.result()
        self.main = main
        self.service, self.loadgen, self.api, self.token = main.service, main.loadgen, main.api, main.token
        self.device_index, self.equipments = main.device_index, main.equipments
        self.size_after_setup = dir_bytes(main.service.data_dir)
        self.db_after_setup = db_logical_bytes(main.service.data_dir)
        self.idle_rss_after_setup = rss_mb(main.service.pid)  # type: ignore[arg-type]
        self.result["home"] = main.info
        log(f"home ready: 500 devices, 30 zones, 300 equipments ({main.info['setup_s']} s)")
        if disk is not None:
            self.disk_watch = DiskWatch(disk, self.plan.disk_observe_s)
            self.disk_watch.start()
            self.result["disk_service_home"] = {k: disk.info[k] for k in ("setup_s", "discovery_of_500_devices_s", "idle_rss_mb")}

    # ---- 2. pipeline -------------------------------------------------------------------------
    def pipeline(self) -> dict[str, Any]:
        plan = self.plan
        assert self.service and self.monitor
        collector = EventCollector(Decoder(self.device_index, self.next_seq()))
        listener = ws.Listener([ws.connect(self.service.port, self.token, TOPICS)], collector.on_frame)
        thread = threading.Thread(target=listener.run, args=(time.monotonic() + 900,), daemon=True)
        thread.start()
        time.sleep(0.5)
        steps: list[dict[str, Any]] = []
        reserve = self.reserve_after("pipeline")
        try:
            for rate in plan.steps:
                if self.left() - reserve < plan.step_s + plan.settle_max_s + plan.confirm_s + plan.settle_max_s:
                    steps.append({"target_per_s": rate, "skipped": "time budget"})
                    break
                step = self.pipeline_step(rate, plan.step_s, f"step-{rate}", collector, listener)
                steps.append(step)
                log(f"pipeline {rate}/s: offered {step['offered_per_s']}/s, p99 {step['latency']['p99_ms']} ms, lost {step['lost']}, "
                    f"service CPU {step['cpu_percent']['service']}% -> {'pass' if step['pass'] else 'FAIL ' + ', '.join(step['fail_reasons'])}")  # fmt: skip
                if not step["pass"]:
                    break
            passing = [s for s in steps if s.get("pass")]
            confirms = []
            sustained = None
            for candidate in sorted(passing, key=lambda s: -s["target_per_s"])[:2]:
                if self.left() - reserve < plan.confirm_s + plan.settle_max_s:
                    confirms.append({"target_per_s": candidate["target_per_s"], "skipped": "time budget"})
                    break
                rate = candidate["target_per_s"]
                confirm = self.pipeline_step(rate, plan.confirm_s, f"confirm-{rate}", collector, listener)
                confirms.append(confirm)
                log(f"pipeline confirm {rate}/s for {plan.confirm_s:.0f} s: p99 {confirm['latency']['p99_ms']} ms, lost {confirm['lost']} -> {'pass' if confirm['pass'] else 'FAIL'}")
                if confirm["pass"]:
                    sustained = confirm
                    break
        finally:
            listener.stop()
            thread.join(3)
            listener.close()
        at_2000 = next((s for s in steps if s.get("target_per_s") == 2000 and "latency" in s), None)
        return {
            "method": (
                f"one load generator process publishes zigbee2mqtt states (QoS 0) to a real mosquitto at a paced rate; each message "
                f"changes one value, unique per stream, which identifies the message. One WebSocket client subscribed to "
                f"{', '.join(TOPICS)} timestamps every frame on receipt. A message's latency is from its publish to the first frame "
                f"holding its value or a newer value of the same device and key (the hub keeps the latest per batch); a message never "
                f"covered is lost. CPU is utime+stime from /proc over the publishing window, % of one core. handled_per_s is the offered "
                f"rate divided by the slope of coverage time against publish time (1 while the service keeps pace). A step passes "
                f"with no loss (none uncovered, mosquitto's $SYS dropped counter unchanged, WebSocket not closed; mosquitto's default "
                f"configuration queues QoS 0 messages for a connected subscriber without limit, so a service that falls behind shows "
                f"as latency), p99 < 1 s and the offered rate within 5% of the target. After each step the bench waits until no "
                f"device event came for 1 s (settle_s). Steps of {plan.step_s:.0f} s; the best passing rate is then held {plan.confirm_s:.0f} s "
                f"(the next lower passing rate if it fails): that rate is the sustained throughput."
            ),
            "steps": steps,
            "confirmation_runs": confirms,
            "sustained": {
                "msgs_per_s": round(sustained["offered_per_s"]) if sustained else 0,
                "target_per_s": sustained["target_per_s"] if sustained else None,
                "held_s": sustained["duration_s"] if sustained else None,
                "p99_ms": sustained["latency"]["p99_ms"] if sustained else None,
                "note": None if sustained else "no rate held without loss and with p99 < 1 s",
                # No step nor hold failed (the last passed, or the budget skipped the rest): the ceiling lies above.
                "bounded_by_highest_step": bool(sustained and not any(s.get("pass") is False for s in steps + confirms)),
            },
            "p99_ms_at_2000": at_2000["latency"]["p99_ms"] if at_2000 else None,
        }

    def pipeline_step(self, rate: int, duration: float, tag: str, collector: EventCollector, listener: ws.Listener) -> dict[str, Any]:
        assert self.service and self.monitor
        counts_before = dict(collector.counts)
        dropped_before = self.monitor.dropped()
        rss_samples: list[float] = []
        sample = lambda: rss_samples.append(rss_mb(self.service.pid) or 0)  # noqa: E731
        meter = CpuMeter(self.pids(bench_ws_client=os.getpid())).start()
        run = self.load(rate, duration, tag, sample)
        cpu = meter.stop()
        t_end = time.monotonic()
        self.load_s += run["elapsed"]
        # Settle: until no device event for 1 s (the service caught up), at least 1.2 s (the broker's
        # $SYS counters are published every second).
        settled = False
        while time.monotonic() - t_end < self.plan.settle_max_s:
            quiet = time.monotonic() - max(collector.last_device_event, t_end)
            if quiet >= 1.0 and time.monotonic() - t_end >= 1.2:
                settled = True
                break
            time.sleep(0.1)
        settle_s = time.monotonic() - t_end
        dropped_after = self.monitor.dropped()
        times = load_times(run["times_file"])
        report = step_report(run, times, collector)
        os.unlink(run["times_file"])
        broker_dropped = (dropped_after - dropped_before) if dropped_after is not None and dropped_before is not None else None
        closed = listener.closed[0]
        offered = run["offered_per_s"]
        reasons = []
        if report["lost"]:
            reasons.append(f"{report['lost']} lost")
        if broker_dropped:
            reasons.append(f"broker dropped {broker_dropped}")
        if closed:
            reasons.append(f"WebSocket closed ({closed})")
        p99 = report["latency"]["p99_ms"]
        if p99 is None or p99 >= 1000:
            reasons.append(f"p99 {p99} ms >= 1000 ms")
        if offered < 0.95 * rate:
            reasons.append(f"load generator reached only {offered:.0f}/s")
        events = {k: v - counts_before.get(k, 0) for k, v in collector.counts.items() if v - counts_before.get(k, 0)}
        return {
            "target_per_s": rate,
            "duration_s": round(run["elapsed"], 2),
            "offered_per_s": round(offered, 1),
            **report,
            "broker_dropped": broker_dropped,
            "ws_closed": closed,
            "events_received": events,
            "cpu_percent": cpu,
            "service_rss_mb": {"max": max(rss_samples, default=None), "end": rss_mb(self.service.pid)},
            "settle_s": round(settle_s, 2),
            "settled": settled,
            "generator_max_lag_ms": run["max_lag_ms"],
            "pass": not reasons,
            "fail_reasons": reasons,
        }

    def mixed_need_s(self) -> float:
        plan = self.plan
        return 5 * plan.rest_s + plan.mixed_s + plan.quiet_s + 2 * plan.settle_max_s + 15

    def reserve_after(self, name: str) -> float:
        """Seconds the parts after ``name`` need."""
        plan = self.plan
        need = {
            "fanout": plan.fanout_s + 25,
            "rest": 6 * plan.rest_s + 20 + plan.round_trips * 0.02,
            "mixed": self.mixed_need_s(),
            "memory_startup": 30 + max(0.0, plan.load_target_s - (plan.fanout_s if "fanout" in self.parts else 0) - 100),
            "disk": 10,
            "history": 0,  # run whatever the budget says (always=True), after the services stopped
        }
        after = PARTS[PARTS.index(name) + 1 :]
        return sum(need[p] for p in after if p in self.parts)

    # ---- 3. fan-out --------------------------------------------------------------------------
    def fanout(self) -> dict[str, Any]:
        plan = self.plan
        assert self.service and self.monitor
        index_file = self.workdir / "device-index.json"
        index_file.write_text(json.dumps(self.device_index))
        out_file = self.workdir / "fanout.json"
        start_seq = self.next_seq()
        fan = Helper(
            "fanout",
            ["--port", str(self.service.port), "--token", self.token, "--clients", str(plan.fanout_clients), "--start-seq", str(start_seq),
             "--index", str(index_file), "--out", str(out_file)],
            self.workdir / "fanout.log",
        )  # fmt: skip
        self.helpers.append(fan)
        ready = fan.receive(60)
        samples: list[tuple[float, float]] = []
        t_load = time.monotonic()
        sample = lambda: samples.append((time.monotonic() - t_load, rss_mb(self.service.pid) or 0))  # noqa: E731
        sample()
        dropped_before = self.monitor.dropped()
        meter = CpuMeter(self.pids(clients=fan.pid)).start()
        run = self.load(plan.fanout_rate, plan.fanout_s, "fanout", sample, interval=2.0)
        cpu = meter.stop()
        self.load_s += run["elapsed"]
        time.sleep(2.0)  # the last batches
        sample()
        fan.send({"cmd": "stop"})
        fan.receive(60)
        fan.close()
        self.helpers.remove(fan)
        dropped_after = self.monitor.dropped()
        found = json.loads(out_file.read_text())
        times = load_times(run["times_file"])
        os.unlink(run["times_file"])
        report = fanout_report(run, times, found)
        return {
            "method": (
                f"{plan.fanout_clients} WebSocket clients in one process (one thread, raw sockets, receipt timestamps per recv) "
                f"subscribed to {', '.join(TOPICS)}, load {plan.fanout_rate} messages/s for {plan.fanout_s:.0f} s (each device and key "
                f"changes about once a second, so the 200 ms dedupe never merges two values). Client 0 decodes every frame; each other "
                f"client must hold the same frames (CRC-32 and length: the hub sends one encoded batch to all), which gives every "
                f"client's latency for every message. Memory: service RSS sampled every 2 s; growth = mean of the last third minus "
                f"mean of the first third after 10 s of warm-up."
            ),
            "clients": ready.get("ready"),
            "offered_per_s": round(run["offered_per_s"], 1),
            "duration_s": round(run["elapsed"], 1),
            **report,
            "broker_dropped": (dropped_after - dropped_before) if dropped_after is not None and dropped_before is not None else None,
            "cpu_percent": cpu,
            "memory": memory_trend(samples),
        }

    # ---- 4. REST -----------------------------------------------------------------------------
    def rest(self) -> dict[str, Any]:
        plan = self.plan
        assert self.service and self.monitor
        switches = [e for e in self.equipments if e["type"] == "switch" and "state" in e["orders"]]
        orders = [["POST", f"/api/v1/equipments/{e['id']}/orders/state", {"value": v}] for e in switches for v in ("ON", "OFF")]
        endpoints = [
            ("GET /devices", [["GET", "/api/v1/devices", None]]),
            ("GET /equipments", [["GET", "/api/v1/equipments", None]]),
            ("GET /zones", [["GET", "/api/v1/zones", None]]),
            ("GET /zones/aggregation", [["GET", "/api/v1/zones/aggregation", None]]),
            ("POST /equipments/:id/orders/state", orders),
        ]
        results: dict[str, Any] = {}
        for name, requests_ in endpoints:
            before = self.monitor.order_count()
            answer = self.http_load(requests_, 8, plan.rest_s)
            if name.startswith("POST"):
                time.sleep(0.5)
                answer["set_messages_on_mqtt"] = self.monitor.order_count() - before
                answer["note"] = "set_messages_on_mqtt counts <base>/<device>/set messages seen by the bench; it should equal ok (plus warm-up requests)"
            results[name] = answer
            log(f"rest {name}: {answer.get('ok_per_s')} ok/s, p99 {answer.get('latency', {}).get('p99_ms')} ms, statuses {answer.get('statuses')}")
        results["order_round_trip"] = self.order_round_trip(switches)
        return {
            "method": (
                f"per endpoint, a separate process runs 8 threads, each a keep-alive HTTP/1.1 connection (raw sockets) with the API "
                f"token, back to back for {plan.rest_s:.0f} s after 5 warm-up requests each; requests/s counts every answer, ok_per_s "
                f"the 2xx. Orders alternate ON/OFF over the 100 switch equipments. Order round trip: {plan.round_trips} orders one at a "
                f"time, from sending the POST to the bench's MQTT client receiving <base>/<device>/set."
            ),
            "concurrency": 8,
            **results,
        }

    def start_http_load(self, requests_: list[list[Any]], concurrency: int, duration: float, token: str | None = None, port: int | None = None) -> tuple[Helper, CpuMeter]:
        """Keep-alive HTTP clients in a process of their own (``benchlib.restload``), started: the
        helper answers once its ``duration`` is over. ``token=""``: anonymous clients."""
        assert self.service
        helper = Helper(
            "restload",
            ["--port", str(port or self.service.port), "--token", self.token if token is None else token,
             "--concurrency", str(concurrency), "--duration", str(duration), "--requests", json.dumps(requests_)],
            self.workdir / "restload.log",
        )  # fmt: skip
        self.helpers.append(helper)
        return helper, CpuMeter({"service": self.service.pid, "http_clients": helper.pid}).start()

    def finish_http_load(self, helper: Helper, meter: CpuMeter, duration: float) -> dict[str, Any]:
        answer = helper.receive(duration + 90)
        answer["cpu_percent"] = meter.stop()
        helper.close()
        self.helpers.remove(helper)
        self.load_s += duration
        return answer

    def http_load(self, requests_: list[list[Any]], concurrency: int, duration: float, token: str | None = None, port: int | None = None) -> dict[str, Any]:
        """One HTTP load run to its end: the clients' JSON answer plus the CPU used meanwhile."""
        return self.finish_http_load(*self.start_http_load(requests_, concurrency, duration, token, port), duration)

    def order_round_trip(self, switches: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.service and self.monitor
        conn = http.client.HTTPConnection("127.0.0.1", self.service.port, timeout=10)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        to_mqtt, to_http, missing, statuses = [], [], 0, {}
        for n in range(self.plan.round_trips):
            equipment = switches[n % len(switches)]
            topic = f"{home.BASE_TOPIC}/{home.name(equipment['device'])}/set"
            value = "ON" if (n // len(switches)) % 2 else "OFF"
            mark = self.monitor.order_count()
            t0 = time.monotonic()
            conn.request("POST", f"/api/v1/equipments/{equipment['id']}/orders/state", json.dumps({"value": value}), headers)
            response = conn.getresponse()
            response.read()
            t1 = time.monotonic()
            statuses[str(response.status)] = statuses.get(str(response.status), 0) + 1
            t2 = self.monitor.wait_order(mark, topic, 5.0)
            to_http.append(t1 - t0)
            if t2 is None:
                missing += 1
            else:
                to_mqtt.append(t2 - t0)
            time.sleep(0.005)
        conn.close()
        return {
            "orders": self.plan.round_trips,
            "statuses": statuses,
            "post_to_mqtt_set": analysis.latency_ms(to_mqtt),
            "post_to_http_answer": analysis.latency_ms(to_http),
            "set_messages_missing": missing,
        }

    # ---- 5. memory and start-up --------------------------------------------------------------
    def memory_startup(self) -> dict[str, Any]:
        plan = self.plan
        assert self.service
        out: dict[str, Any] = {}
        topup = max(0.0, plan.load_target_s - self.load_s)
        topup = min(topup, max(0.0, self.left() - self.reserve_after("memory_startup") - 30))
        if topup >= 1:
            log(f"memory: {topup:.0f} s more load at {plan.topup_rate}/s to reach {plan.load_target_s:.0f} s under load")
            run = self.load(plan.topup_rate, topup, "topup")
            os.unlink(run["times_file"])
            self.load_s += run["elapsed"]
        time.sleep(2.0)
        pid = self.service.pid
        out["idle_rss_mb_after_setup"] = self.idle_rss_after_setup
        out["rss_mb_after_load"] = rss_mb(pid)  # type: ignore[arg-type]
        out["peak_rss_mb"] = round((status_kb(pid, "VmHWM") or 0) / 1024, 1)  # type: ignore[arg-type]
        out["load_s_before_measure"] = round(self.load_s, 1)
        out["messages_published_so_far"] = self.next_seq()
        stop = self.service.stop()
        out["clean_stop"] = {k: stop[k] for k in ("stop_s", "exit_code", "killed")}
        out["database_growth"] = self.database_growth(out["messages_published_so_far"])
        out.update(self.restart())
        self.service.stop()
        out["method"] = (
            "RSS from /proc/<pid>/status VmRSS. Idle after setup: the first process, home built, no traffic, no WebSocket client, "
            f"after {plan.idle_settle_s:.0f} s. After load: the same process once it has spent load_s_before_measure seconds under "
            f"load (pipeline, fan-out, REST{f', and a top-up at {plan.topup_rate}/s to reach {plan.load_target_s:.0f} s' if plan.load_target_s else '; no top-up with --quick'}). Start-up: "
            "a second process on the same data directory after a clean stop (SIGTERM): from spawning it to the first "
            "GET /api/v1/health answering 200 (polled every 5 ms), and to the first device.data.updated frame on a WebSocket "
            "client (connected as soon as health answers) while the load generator publishes 100 messages/s (from just before the "
            "spawn until that first event, 30 s at most). Idle after restart: "
            f"that process {plan.idle_settle_s:.0f} s after the traffic stopped. The bar uses the larger of the two idle figures."
        )
        return out

    def restart(self) -> dict[str, Any]:
        """Start a second service process on the same database, with a load running meanwhile."""
        plan = self.plan
        assert self.loadgen and self.service
        port = self.service.port
        self.service = Service(self.service.data_dir, self.workdir / "service-main-restart.log", port=port)
        self.main.service = self.service
        first_event: dict[str, float] = {}

        def on_frame(_index: int, t: float, payload: bytes) -> None:
            if "t" not in first_event and b'"device.data.updated"' in payload:
                first_event["t"] = t

        # 100 messages/s from before the spawn until the first device event is seen (30 s at most).
        self.loadgen.send({"cmd": "run", "rate": 100, "duration": STARTUP_WAIT_S, "tag": "startup", "stoppable": True})
        time.sleep(0.2)
        self.service.spawn()
        healthy = self.service.wait_healthy()
        listener = None
        t_limit = time.monotonic() + 15
        while listener is None and time.monotonic() < t_limit:
            try:
                listener = ws.Listener([ws.connect(port, self.token, ["devices"])], on_frame)
            except OSError:
                time.sleep(0.01)
        if listener is None:
            raise RuntimeError("no WebSocket connection to the restarted service")
        thread = threading.Thread(target=listener.run, args=(time.monotonic() + STARTUP_WAIT_S,), daemon=True)
        thread.start()
        deadline = self.service.spawned_at + STARTUP_WAIT_S - 1
        while "t" not in first_event and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        self.loadgen.send({"cmd": "stop"})
        answer = self.loadgen.receive(30)
        if "times_file" in answer:
            os.unlink(answer["times_file"])
        listener.stop()
        thread.join(3)
        listener.close()
        time.sleep(plan.idle_settle_s)
        idle = rss_mb(self.service.pid)  # type: ignore[arg-type]
        return {
            "startup_to_healthy_s": round(healthy, 3),
            "startup_to_first_device_message_s": round(first_event["t"] - self.service.spawned_at, 3) if "t" in first_event else None,
            "idle_rss_mb_after_restart": idle,
            "idle_rss_mb": max(v for v in (self.idle_rss_after_setup, idle) if v is not None),
            "devices_after_restart": len(self.api.get("/devices")) if self.api else None,
        }

    def database_growth(self, messages: int) -> dict[str, Any]:
        """The main service's database after setup and now, and a week at 10 messages/s extrapolated."""
        assert self.service
        now = db_logical_bytes(self.service.data_dir)
        files = dir_bytes(self.service.data_dir)
        growth = max(0, now["used"] - self.db_after_setup.get("used", 0))
        per_message = growth / messages if messages else None
        week = self.db_after_setup.get("used", 0) + (per_message or 0) * WEEK_MESSAGES_AT_10
        return {
            "note": None if messages else "no load ran on the main service: no growth sample (run pipeline, fanout or memory_startup too)",
            "method": (
                "pages in use in the service's SQLite files (page_count - freelist_count, read-only while it runs, so whether "
                "the write-ahead log was checkpointed does not matter), after setup and after the load; growth per message "
                f"applied to {WEEK_MESSAGES_AT_10} messages (10/s for 7 days) on top of the size after setup. Linear: it assumes "
                "a message costs the same space all week."
            ),
            "messages_in_sample": messages,
            "used_bytes_after_setup": self.db_after_setup.get("used"),
            "used_bytes_after_load": now["used"],
            "growth_bytes_per_message": round(per_message, 4) if per_message is not None else None,
            "database_bytes_after_simulated_week": round(week),
            "database_mb_after_simulated_week": round(week / 1e6, 2),
            "data_dir_file_bytes_after_setup": self.size_after_setup,
            "data_dir_file_bytes_after_load": files,
        }

    # ---- 6. disk -----------------------------------------------------------------------------
    def disk(self) -> dict[str, Any]:
        watch = self.disk_watch
        if watch is None:
            raise RuntimeError("no disk service was started")
        # A write-back every few minutes has to be seen: wait until the disk service has run long enough.
        wait = min(self.plan.disk_observe_s - watch.since_spawn(), self.left() + 30)
        if wait > 0:
            log(f"disk: {wait:.0f} s more at 10 messages/s (the disk service must run {self.plan.disk_observe_s:.0f} s)")
            time.sleep(wait)
        out = watch.finish()
        out["method"] = (
            "a dedicated service (fresh data directory, the same 500-device home with its zones and equipments, base topic "
            f"{DISK_BASE_TOPIC}) gets a steady 10 messages/s from a second load generator, from the end of its setup to the end of "
            "the run, while write_bytes of /proc/<pid>/io (bytes the process caused to be written to storage, page cache "
            "included, so SQLite's writes count when made, not when the kernel flushes them) is sampled every 2 s. Write-backs (intervals writing >= 64 KiB and 20x the median) are found in the "
            "samples; the per-hour figure uses whole periods between write-backs when two are seen, the one write-back seen and "
            "its delay after the process start otherwise, and an upper bound (the write-back done at the clean stop, read with "
            "wait4's ru_oublock, counted once per window) when none is seen."
        )
        main_growth = _get(self.result, "memory_startup", "database_growth")
        if main_growth is None and self.service is not None and self.service.alive():
            main_growth = self.database_growth(self.next_seq())
        out["database_after_simulated_week"] = main_growth
        return out


def fanout_report(run: dict[str, Any], times: Any, found: dict[str, Any]) -> dict[str, Any]:
    first, count = run["first_seq"], run["count"]
    frames = found["reference_frames"]  # [crc, length, seqs, time]
    received: dict[int, float] = {}
    for index, (_crc, _length, seqs, _t) in enumerate(frames):
        for seq in seqs:
            if first <= seq < first + count and seq not in received:
                received[seq] = index
    covered = analysis.coverage(first, count, received)
    all_latencies: list[float] = []
    per_client = []
    for i, client in enumerate(found["clients"]):
        if i == 0:
            frame_times = [f[3] for f in frames]
            missing_frames = 0
        else:
            by_key: dict[tuple[int, int], list[float]] = {}
            for crc, length, t in client["received"]:
                by_key.setdefault((crc, length), []).append(t)
            frame_times = []
            for crc, length, _seqs, _t in frames:
                got = by_key.get((crc, length))
                frame_times.append(got.pop(0) if got else None)
            missing_frames = sum(1 for t, f in zip(frame_times, frames) if t is None and f[2])
        lost = 0
        latencies = []
        for c, p in zip(covered, times):
            t = frame_times[int(c)] if c is not None else None
            if t is None:
                lost += 1
            else:
                latencies.append(t - p)
        all_latencies.extend(latencies)
        stats = analysis.latency_ms(latencies)
        per_client.append({"lost": lost, "missing_frames": missing_frames, "closed": client["closed"], "p99_ms": stats["p99_ms"], "frames": client["frames"]})
    complete = [c for c in per_client if c["lost"] == 0 and not c["closed"]]
    p99s = [c["p99_ms"] for c in per_client if c["p99_ms"] is not None]
    return {
        "published": count,
        "direct_in_reference": len(received),
        "lost_in_reference": sum(1 for c in covered if c is None),
        "clients_with_every_change": len(complete),
        "every_client_every_change": len(complete) == len(per_client),
        "latency_all_clients": analysis.latency_ms(all_latencies),
        "per_client_p99_ms": {"min": min(p99s, default=None), "max": max(p99s, default=None)},
        "clients_closed": [i for i, c in enumerate(per_client) if c["closed"]],
        "clients_incomplete": [{"client": i, **c} for i, c in enumerate(per_client) if c["lost"] or c["closed"]][:10],
        "events_received_by_client_0": found["reference_counts"],
    }


def memory_trend(samples: list[tuple[float, float]]) -> dict[str, Any]:
    warm = [(t, v) for t, v in samples if t >= 10] or samples
    third = max(1, len(warm) // 3)
    first, last = warm[:third], warm[-third:]
    mean = lambda xs: sum(v for _t, v in xs) / len(xs) if xs else None  # noqa: E731
    growth = mean(last) - mean(first) if first and last else None
    slope = None
    if len(warm) >= 3:
        n = len(warm)
        mt, mv = sum(t for t, _ in warm) / n, sum(v for _, v in warm) / n
        var = sum((t - mt) ** 2 for t, _ in warm)
        slope = sum((t - mt) * (v - mv) for t, v in warm) / var * 60 if var else None
    start_value = samples[0][1] if samples else None
    limit = max(2.0, 0.03 * (start_value or 0))
    return {
        "rss_mb_start": start_value,
        "rss_mb_end": samples[-1][1] if samples else None,
        "rss_mb_max": max((v for _t, v in samples), default=None),
        "growth_mb": round(growth, 2) if growth is not None else None,
        "slope_mb_per_min": round(slope, 3) if slope is not None else None,
        "no_growth": growth is not None and growth <= limit,
        "no_growth_rule": f"growth (last third minus first third) <= {limit:.1f} MB",
        "samples": [[round(t, 1), v] for t, v in samples],
    }


def machine_info() -> dict[str, Any]:
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, timeout=5).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    try:
        import hausbox

        version = hausbox.__version__
    except Exception:  # noqa: BLE001
        version = None
    mem_kb = None
    try:
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "cpu_model": cpu_model,
        "memory_mb": round(mem_kb / 1024) if mem_kb else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hausbox_version": version,
        "git_commit": commit,
        "git_dirty": dirty,
        "loadavg_start": os.getloadavg(),
    }


def _get(result: dict[str, Any], *path: str) -> Any:
    value: Any = result
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def bar(result: dict[str, Any]) -> list[dict[str, Any]]:
    rest = result.get("rest", {})
    zones = [_get(rest, "GET /zones", "ok_per_s"), _get(rest, "GET /zones/aggregation", "ok_per_s")]
    checks = [
        ("sustained throughput", ">=", BAR["sustained_msgs_per_s"], "msg/s", _get(result, "pipeline", "sustained", "msgs_per_s")),
        ("p99 latency at 2000 msg/s", "<", BAR["p99_ms_at_2000"], "ms", _get(result, "pipeline", "p99_ms_at_2000")),
        ("RSS idle with the 500-device home", "<", BAR["idle_rss_mb"], "MB", _get(result, "memory_startup", "idle_rss_mb")),
        ("start-up to healthy", "<", BAR["startup_to_healthy_s"], "s", _get(result, "memory_startup", "startup_to_healthy_s")),
        ("GET /zones and /zones/aggregation (the slower)", ">=", BAR["zones_req_per_s"], "req/s", min(zones) if None not in zones else None),
        ("GET /devices", ">=", BAR["devices_req_per_s"], "req/s", _get(rest, "GET /devices", "ok_per_s")),
        ("order round trip p99 (POST to MQTT /set)", "<", BAR["order_round_trip_p99_ms"], "ms", _get(rest, "order_round_trip", "post_to_mqtt_set", "p99_ms")),
        ("written per hour at 10 msg/s", "<", BAR["written_mb_per_hour_at_10"], "MB", _get(result, "disk", "mb_per_hour")),
    ]
    out = []
    for name, op, target, unit, value in checks:
        ok = None if value is None else (value >= target if op == ">=" else value < target)
        out.append({"name": name, "target": f"{op} {target} {unit}", "value": value, "unit": unit, "pass": ok})
    disk = result.get("disk", {})
    if disk.get("upper_bound") and out[7]["pass"] is False:
        out[7]["pass"] = None  # an upper bound above the target says nothing
        out[7]["note"] = "upper bound only (no periodic write-back seen in the window): inconclusive"
    out += mixed.bar(result)
    out += history.bar(result.get("history", {}))
    fan = result.get("fanout", {})
    if "every_client_every_change" in fan:
        ok = bool(fan["every_client_every_change"] and _get(fan, "memory", "no_growth"))
        out.append({"name": "fan-out: 50 clients get every change, no memory growth", "target": "all clients complete, no growth", "value": f"{fan.get('clients_with_every_change')}/{fan.get('clients')} complete, growth {_get(fan, 'memory', 'growth_mb')} MB", "unit": None, "pass": ok})
    return out


def parse_parts(text: str | None) -> set[str]:
    if not text:
        return set(PARTS)
    parts = set()
    for item in text.split(","):
        item = ALIASES.get(item.strip(), item.strip())
        if item not in PARTS:
            raise SystemExit(f"--only: unknown part {item!r} (choose from {', '.join(PARTS)})")
        parts.add(item)
    return parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/bench", description="Measure the hausbox service end to end; prints one JSON document.")
    parser.add_argument("--quick", action="store_true", help="a 1-2 minute smoke run with short steps")
    parser.add_argument("--only", help=f"comma-separated parts to run: {', '.join(PARTS)}")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, data) for inspection")
    parser.add_argument("--output", type=Path, help="also write the JSON document to this file")
    parser.add_argument("--disk-minutes", type=float, help="watch the disk service this long (the history store moves its journal into SQLite every 30 minutes: `--only disk --disk-minutes 65` sees whole periods)")
    args = parser.parse_args(argv)
    plan = Plan(args.quick)
    if args.disk_minutes:
        plan.disk_observe_s = args.disk_minutes * 60
        plan.budget_s = max(plan.budget_s, plan.disk_observe_s + 120)
    bench = Bench(plan, parse_parts(args.only), args.keep)

    # Hard stop: whatever hangs, the run ends (with what it has) 45 s after its budget (< 10 min).
    def hard_stop() -> None:
        log("hard time limit reached: stopping")
        bench.errors.append({"part": "run", "error": "hard time limit reached"})
        bench.result["errors"] = bench.errors
        bench.cleanup()
        print(json.dumps(bench.result, indent=2, default=str), flush=True)
        os._exit(2)

    watchdog = threading.Timer(plan.budget_s + 45, hard_stop)
    watchdog.daemon = True
    watchdog.start()
    result = bench.run()
    watchdog.cancel()
    text = json.dumps(result, indent=2, default=str)
    if args.output:
        args.output.write_text(text + "\n")
    print(text, flush=True)
    return 0
