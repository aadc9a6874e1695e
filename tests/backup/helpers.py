"""A populated home for the backup tests, and a comparison of every read route between two servers."""

from __future__ import annotations

import io
import re
import sqlite3
import time
import zipfile
from typing import Any

from hausbox.api.routing import all_routes
from hausbox.history.batch import Batch
from hausbox.history.store import HistoryStore
from tests.harness import Api, Home, Server, wait_for

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# Reads whose answer is about the running process, not the data: uptime, logs, the mode of this
# deployment, the history writer's counters, the arbiter's metrics (since the process started),
# the retention jobs' watermarks (each start moves them to now minus the retention).
VOLATILE = {
    "/health", "/logs", "/logs/level", "/system/mode", "/system/version", "/system/timezone", "/history/status", "/history/retention",
    "/energy/arbiter/metrics", "/backup", "/backup/local", "/plugins/store", "/audit", "/me/mfa",
}  # fmt: skip
_PARAM = re.compile(r"<[^>]+>|:[A-Za-z]+")


def created(response: Any, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return response.json()


def populate(home: Home) -> dict[str, Any]:
    """Zones, equipments, modes, a recipe instance, users, API tokens, charts, widgets, a calendar
    slot and settings, all through the API; returns what the history step and the checks need."""
    api = home.admin
    # Devices from the built-in simulator (one room, no periodic messages)
    simulator = {"integration.simulator.enabled": True, "integration.simulator.rooms": 1, "integration.simulator.message_rate": 0}
    assert api.put("/settings", simulator).status_code == 200
    devices = wait_for(lambda: (lambda d: d if {"sim-main-meter", "sim-salon-climate-1"} <= set(d) else None)(
        {d["sourceDeviceId"]: d for d in api.get("/devices").json()}), timeout=10)  # fmt: skip
    salon = created(api.post("/zones", {"name": "Salon", "icon": "sofa"}))
    cuisine = created(api.post("/zones", {"name": "Cuisine", "parentId": salon["id"]}))
    sensor = created(api.post("/equipments", {"name": "Meteo", "type": "sensor", "zoneId": salon["id"], "deviceIds": [devices["sim-salon-climate-1"]["id"]]}))
    meter = created(api.post("/equipments", {"name": "Compteur", "type": "energy_meter", "zoneId": cuisine["id"], "deviceIds": [devices["sim-main-meter"]["id"]]}))
    mode = created(api.post("/modes", {"name": "Nuit", "icon": "moon"}))
    assert api.put(f"/modes/{mode['id']}/impacts/{salon['id']}", {"actions": []}).status_code in (200, 201, 204)
    created(api.post("/recipe-instances", {"recipeId": "freecooling", "params": {"zone": salon["id"], "offsetMinutes": 5}}))
    user, user_api = home.new_user("standard")
    token = created(user_api.post("/me/tokens", {"name": "script"}))
    admin_token = created(api.post("/me/tokens", {"name": "admin script"}))
    created(api.post("/charts", {"name": "Temperatures", "config": {"series": [{"equipmentId": sensor["id"], "alias": "temperature"}]}}))
    created(api.post("/dashboard/widgets", {"type": "equipment", "equipmentId": sensor["id"]}))
    profile = api.get("/calendar/profiles").json()[0]["id"]
    created(api.post(f"/calendar/profiles/{profile}/slots", {"days": [1, 2, 3], "time": "07:30", "modeActions": [{"modeId": mode["id"], "action": "on"}]}))
    assert api.put("/settings", {"history.commitIntervalSeconds": 7, "home.name": "Chez nous"}).status_code == 200
    # The simulator stops: its devices and their last values stay, and a restored box does not
    # start it again (its start would report fresh values: live data, not the restore's).
    assert api.put("/settings", {"integration.simulator.enabled": False}).status_code == 200
    return {"sensor": sensor, "meter": meter, "user": user, "user_token": token["token"], "admin_token": admin_token["token"], "zones": [salon, cuisine]}


def add_history(server: Server, sensor_id: str, meter_id: str) -> None:
    """History in every tier, written into the stopped server's store (then started again)."""
    server.stop()
    now = int(time.time() * 1000)
    hour = now - now % HOUR_MS
    store = HistoryStore(server.data_dir / "history.db")
    batch = Batch(
        points=[(sensor_id, "temperature", now - i * 600_000, 19.0 + i / 8) for i in range(1, 30)] + [(sensor_id, "temperature", now - 5000, 1 / 3)],
        texts=[(sensor_id, "humidity-text", now - i * 900_000, ("ok", "low")[i % 2]) for i in range(1, 6)],
        meters={(meter_id, "energy"): (12.5, now - 60_000, "the-meters-energy-datum")},
    )
    for i in range(1, 48):
        batch.add_energy((meter_id, "energy"), hour - i * HOUR_MS, hour - hour % DAY_MS - (i // 24) * DAY_MS, 100.0 + i, 25.5)
    store.write(batch)
    store.flush()
    store.close()
    db = sqlite3.connect(server.data_dir / "history.db")
    series = db.execute("SELECT id FROM series WHERE equipment_id = ? AND alias = 'temperature'", (sensor_id,)).fetchone()[0]
    with db:
        for i in range(10, 40):
            db.execute("INSERT INTO hourly VALUES (?, ?, 17.5, 21.25, 19.0, 190.0, 10)", (hour - i * HOUR_MS - 20 * DAY_MS, series))
        for i in range(30, 60):
            db.execute("INSERT INTO daily VALUES (?, ?, 15.0, 22.0, 18.5, 4440.0, 240)", (hour - i * DAY_MS, series))
    db.close()
    server.start()


def history_paths(sensor_id: str, meter_id: str) -> list[str]:
    return [
        f"/history/{sensor_id}", f"/history/{sensor_id}/temperature?from=-1d", f"/history/{sensor_id}/temperature?from=-60d&aggregation=1h",
        f"/history/{sensor_id}/temperature?from=-400d&aggregation=1d",
        f"/history/{meter_id}/energy?from=-3d&aggregation=1h", f"/history/{meter_id}/energy?from=-3d&aggregation=1d",
        f"/history/sparkline/{sensor_id}/temperature", "/energy/history?period=week", "/energy/by-usage?period=week",
    ]  # fmt: skip


def read_paths(api: Api, extra: list[str]) -> list[str]:
    """Every GET route of the route table: those without parameters, and those with one whose
    listing (the path without its last segment) lists objects with ids, for each id."""
    paths: list[str] = []
    for route in all_routes():
        if route.method != "GET":
            continue
        params = _PARAM.findall(route.path)
        if not params:
            paths.append(route.path)
        elif len(params) == 1 and route.path.endswith(params[0]):
            listing = route.path[: -len(params[0]) - 1]
            answer = api.get(listing)
            if answer.status_code == 200 and isinstance(answer.json(), list):
                paths += [f"{listing}/{item['id']}" for item in answer.json() if isinstance(item, dict) and "id" in item]
    return [p for p in paths if p not in VOLATILE] + extra


def answers(api: Api, paths: list[str]) -> dict[str, Any]:
    """Each path's status and JSON (or bytes' length)."""
    found: dict[str, Any] = {}
    for path in paths:
        response = api.get(path)
        kind = response.headers.get("Content-Type", "")
        found[path] = (response.status_code, response.json() if kind.startswith("application/json") else len(response.content))
    return found


def zip_of(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as out:
        for name, data in entries.items():
            out.writestr(name, data)
    return buffer.getvalue()


def entries_of(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        return {name: zipped.read(name) for name in zipped.namelist()}


def upload(api: Api, archive: bytes) -> Any:
    return api.post("/backup", files={"file": ("backup.zip", archive, "application/zip")})


def differences(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """Per path that answers differently, the first place where the two answers part."""
    found: dict[str, str] = {}
    for path, answer in after.items():
        where = _first_difference(before[path], answer, "")
        if where is not None:
            found[path] = where
    return found


def _first_difference(a: Any, b: Any, at: str) -> str | None:
    if type(a) is not type(b):
        return f"{at}: {str(a)[:120]} != {str(b)[:120]}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{at}.{key}: only in {'after' if key not in a else 'before'}"
            found = _first_difference(a[key], b[key], f"{at}.{key}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{at}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{at}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{at}: {str(a)[:120]} != {str(b)[:120]}"
