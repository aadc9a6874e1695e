"""The history store on its own: ingest rate, bytes per raw point, and query times on a full store.

Run in this process against a store in a temporary directory (no service: the figures are the
store's and the query functions' that the routes call; the service's bytes written per hour with
history on are the ``disk`` part's, its throughput the ``pipeline`` part's).

1. ingest: 50 series, a point a minute each, for 7 days (504,000 points) written in batches of
   500 as the writer commits them; points/s over the whole write, then bytes on disk per raw point
   after a checkpoint;
2. a full store: those 7 days of raw points plus two years of hourly and daily rows and energy
   sums (a main meter, a production meter, 5 submeters), written as the downsampling jobs and the
   writer would; then each query timed (best and median of 15): a 24 h sparkline (one
   equipment, a zone of 5), a year of daily means, a week of hourly means, and a year of
   ``/energy/history`` and ``/energy/by-usage`` as their routes compute them.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hausbox.history import buckets  # noqa: E402
from hausbox.history.batch import Batch  # noqa: E402
from hausbox.history.store import HistoryStore  # noqa: E402
from hausbox.history.writer import MAX_PENDING  # noqa: E402

TZ = ZoneInfo("Europe/Paris")
SERIES = 50
RAW_DAYS = 7
YEARS = 2
BATCH = 500
BAR = {"ingest_points_per_s": 20_000, "bytes_per_raw_point": 32, "sparkline_ms": 20, "energy_year_ms": 100}


def timed(fn: Callable[[], Any], runs: int = 15) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return {"best_ms": round(min(samples), 2), "median_ms": round(statistics.median(samples), 2)}


def raw_minutes(end_ms: int, equipment_ids: list[str]) -> list[tuple[str, str, int, float]]:
    start = end_ms - RAW_DAYS * buckets.DAY_MS
    rng = random.Random(7)
    return [(eq, "temperature", ts + n, round(rng.uniform(15, 25), 1)) for ts in range(start, end_ms, 60_000) for n, eq in enumerate(equipment_ids)]


def ingest(directory: Path, points: list[tuple[str, str, int, float]]) -> dict[str, Any]:
    """Into SQLite, as the writer does it: each batch journaled, moved into SQLite every 20,000."""
    store = HistoryStore(directory / "ingest.db")
    start = time.perf_counter()
    for at in range(0, len(points), BATCH):
        store.write(Batch(points=points[at:at + BATCH]))
        if store.pending >= MAX_PENDING:
            store.flush()
    store.flush()
    seconds = time.perf_counter() - start
    size = os.path.getsize(directory / "ingest.db")
    store.close()
    return {
        "points": len(points), "points_per_s": round(len(points) / seconds), "bytes_per_raw_point": round(size / len(points), 1),
        "method": (f"{SERIES} series x 1 point/min x {RAW_DAYS} days, in batches of {BATCH} journaled as commits are, moved into SQLite "
                   f"every {MAX_PENDING} points as the writer does; history.db's size / points"),
    }  # fmt: skip


def fill_tiers(store: HistoryStore, end_ms: int, meters: list[tuple[str, str]]) -> None:
    """Two years of what the jobs and the writer leave behind: hourly and daily rows, energy sums."""
    first = buckets.local(end_ms, TZ).date() - timedelta(days=365 * YEARS)
    days = buckets.days_between(first, buckets.local(end_ms, TZ).date(), TZ)
    store.write(Batch(points=[(f"eq{s}", "temperature", days[0], 20.0) for s in range(SERIES)] + [(*key, days[0], 0.0) for key in meters]))
    store.flush()  # the series ids
    ids = [store.series_of(f"eq{s}", "temperature") for s in range(SERIES)]
    meter_ids = [store.series_of(*key) for key in meters]
    db = store._db
    db.execute("BEGIN")
    for day in days:
        hours = buckets.hours_between(day, buckets.next_day(day, TZ), TZ)
        db.executemany("INSERT OR REPLACE INTO hourly VALUES (?, ?, 15, 25, 20, 480, 60)", [(h, i) for h in hours for i in ids])
        db.executemany("INSERT OR REPLACE INTO daily VALUES (?, ?, 15, 25, 20, 11520, 1440)", [(day, i) for i in ids])
        db.executemany("INSERT OR REPLACE INTO energy_hourly VALUES (?, ?, 300, 200)", [(h, i) for h in hours for i in meter_ids])
        db.executemany("INSERT OR REPLACE INTO energy_daily VALUES (?, ?, 7200, 4800)", [(day, i) for i in meter_ids])
    db.execute("INSERT OR REPLACE INTO jobs (name, done_until) VALUES ('downsample-hourly', ?), ('downsample-daily', ?)", (buckets.hour_start(end_ms, TZ), days[-1]))
    db.execute("COMMIT")


def energy_home(directory: Path, end_ms: int) -> Any:
    """The real engine in this process (the suite's harness, a fake integration): a main meter, a
    production meter and 5 submeters, each a device with its energy data."""
    from hausbox.devices.discovery import DataSpec
    from tests.inprocess import House

    house = House(directory, start=end_ms - 12 * buckets.HOUR_MS, tz=TZ)
    energy = [DataSpec("energy", "number", "energy", "kWh"), DataSpec("power", "number", "power", "W")]
    ids = {"main": house.equipment("Linky", "main_energy_meter", [house.device("linky", energy)])}
    solar = [*energy, DataSpec("autoconso", "number", "energy", "kWh"), DataSpec("injection", "number", "energy", "kWh")]
    ids["solar"] = house.equipment("Solar", "energy_production_meter", [house.device("solar", solar)])
    for n in range(5):
        ids[f"sub{n}"] = house.equipment(f"Clamp {n}", "energy_meter", [house.device(f"clamp{n}", energy)])
    ids["salon"] = house.zone("Salon")
    for s in range(SERIES):
        zone = ids["salon"] if s < 5 else None  # a room of 5 sensors; the 45 others in the home's root zone
        ids[f"eq{s}"] = house.equipment(f"Sensor {s}", "sensor", [house.device(f"sensor{s}", [DataSpec("temperature", "number", "temperature", "°C")])], zone_id=zone)
    house.start()
    return house, ids


def run() -> dict[str, Any]:
    out: dict[str, Any] = {"bars": BAR}
    with tempfile.TemporaryDirectory(prefix="hausbox-history-bench-") as tmp:
        directory = Path(tmp)
        end_ms = buckets.midnight(date(2026, 11, 1), TZ)
        out["ingest"] = ingest(directory, raw_minutes(end_ms, [f"eq{s}" for s in range(SERIES)]))
        house, ids = energy_home(directory / "home", end_ms)
        store = house.engine.history.store
        points = raw_minutes(end_ms, [ids[f"eq{s}"] for s in range(SERIES)])
        for at in range(0, len(points), MAX_PENDING):
            store.write(Batch(points=points[at:at + MAX_PENDING]))
            store.flush()
        meters = [(ids["main"], "energy"), (ids["solar"], "energy"), (ids["solar"], "autoconso"), (ids["solar"], "injection")]
        fill_tiers(store, end_ms, meters + [(ids[f"sub{n}"], "energy") for n in range(5)])
        house.clock.set(end_ms)
        sensor, room, root = ids["eq7"], ids["salon"], house.zone_id

        def get(path: str) -> None:
            status, _, _ = house.api("GET", path)
            assert status == 200, (path, status)

        year = buckets.local(end_ms - 1, TZ).date().isoformat()
        out["queries"] = {
            "sparkline_equipment_24h": timed(lambda: get(f"/history/sparkline/{sensor}/temperature")),
            "sparkline_zone_of_5_24h": timed(lambda: get(f"/history/sparkline/zone/{room}/temperature")),
            "sparkline_zone_of_45_24h": timed(lambda: get(f"/history/sparkline/zone/{root}/temperature")),
            "series_raw_24h": timed(lambda: get(f"/history/{sensor}/temperature?from=-24h&aggregation=raw")),
            "series_1h_7d": timed(lambda: get(f"/history/{sensor}/temperature?from=-7d&aggregation=1h")),
            "series_1d_1y": timed(lambda: get(f"/history/{sensor}/temperature?from=-365d&aggregation=1d")),
            "energy_history_year": timed(lambda: get(f"/energy/history?period=year&date={year}")),
            "energy_history_day": timed(lambda: get(f"/energy/history?period=day&date={year}")),
            "energy_by_usage_year": timed(lambda: get(f"/energy/by-usage?period=year&date={year}")),
            "method": (f"best and median of 15 requests through the real WSGI app in process (routing, auth, JSON; no socket), on the engine's "
                       f"store holding {RAW_DAYS} days of minute data and {YEARS} years of hourly/daily rows for {SERIES} series, and "
                       f"{YEARS} years of energy sums for a main meter, a production meter and 5 submeters"),
        }  # fmt: skip
        out["store_bytes"] = store.size_bytes()
        house.stop()
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))


def bar(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The history part's rows of the bar table."""
    queries = result.get("queries", {})
    sparkline = [queries.get(name, {}).get("best_ms") for name in ("sparkline_equipment_24h", "sparkline_zone_of_5_24h")]
    checks = [
        ("history ingest into SQLite", ">=", BAR["ingest_points_per_s"], "points/s", result.get("ingest", {}).get("points_per_s")),
        ("bytes on disk per raw point", "<=", BAR["bytes_per_raw_point"], "B", result.get("ingest", {}).get("bytes_per_raw_point")),
        ("24 h sparkline (equipment; zone of 5), the slower", "<=", BAR["sparkline_ms"], "ms", None if None in sparkline else max(sparkline)),
        ("a year of /energy/history", "<=", BAR["energy_year_ms"], "ms", queries.get("energy_history_year", {}).get("best_ms")),
    ]
    return [
        {"name": name, "target": f"{op} {target} {unit}", "value": value, "unit": unit, "pass": None if value is None else (value >= target if op == ">=" else value <= target)}
        for name, op, target, unit, value in checks
    ]
