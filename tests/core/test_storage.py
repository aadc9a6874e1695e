"""The data directory over a real server: the service's user alone reads it, and a full disk refuses
writes with 507 while reads, the log view and the alarm go on."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.disk import fill
from tests.harness import Home
from tests.wsclient import Collector, expect_welcome


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


def test_the_data_directory_is_the_service_users_alone(make_server, tmp_path):
    data = tmp_path / "hausbox"
    data.mkdir(mode=0o755)
    (data / "left-by-an-older-version.txt").write_text("x")
    os.chmod(data / "left-by-an-older-version.txt", 0o644)
    server = make_server(data_dir=data)
    Home(server)  # set-up writes the database, secrets and logs
    server.stop()
    modes = _modes(data)
    assert "hausbox.db" in modes and any(name.startswith("logs") for name in modes)
    loose = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert loose == {}, loose


def test_a_full_disk_refuses_writes_with_507_and_keeps_serving(make_server, small_disk):
    server = make_server(data_dir=small_disk / "hausbox", env={"HAUSBOX_STORAGE_LOW_BYTES": str(1 << 20)})
    home = Home(server)
    api = home.admin
    kept = api.post("/zones", {"name": "Kept"}).json()
    ws = server.ws(home.admin_pair["accessToken"])
    expect_welcome(ws)
    collector = Collector(ws)
    try:
        filler = fill(small_disk)
        for attempt in range(3):
            refused = api.post("/zones", {"name": f"Refused {attempt}"})
            assert refused.status_code == 507, refused.text
            assert refused.json() == {"error": "Storage is full: nothing was changed"}
        assert api.put("/settings", {"home.name": "Full"}).status_code == 507
        names = [z["name"] for z in api.get("/zones").json()[0]["children"]]
        assert "Kept" in names and not any(n.startswith("Refused") for n in names)
        assert api.get("/me").status_code == 200 and api.get("/health").status_code == 200
        assert any("storage full" in e["msg"].lower() for e in api.get("/logs?limit=50").json()["entries"])

        def alarm(c: Collector):
            return next((e for _, m in c.timed_messages() for e in (m if isinstance(m, list) else [m]) if e.get("type") == "system.alarm.raised"), None)

        raised = collector.wait_for(alarm, timeout=5)
        assert raised["alarmId"] == "storage-low" and raised["level"] == "error"

        filler.unlink()
        created = api.post("/zones", {"name": "After"})
        assert created.status_code == 201, created.text
        assert kept["id"] in {z["id"] for z in api.get("/zones").json()[0]["children"]}
    finally:
        collector.close()
    assert server.stop() == 0  # a clean stop, its final writes done now that there is room


def test_the_watch_raises_the_alarm_while_space_is_short_and_resolves_it(tmp_path):
    from hausbox.core.storage import StorageWatch

    calls: list[tuple[str, str]] = []
    raise_alarm = lambda alarm_id, *rest: calls.append(("raised", alarm_id)) or True  # noqa: E731
    resolve = lambda alarm_id, *rest: calls.append(("resolved", alarm_id)) or True  # noqa: E731
    short = StorageWatch(tmp_path, raise_alarm, resolve, low_bytes=1 << 62)  # more than any disk has
    short.check()
    plenty = StorageWatch(tmp_path, raise_alarm, resolve, low_bytes=1)
    plenty.check()
    assert calls == [("raised", "storage-low"), ("resolved", "storage-low")]


def test_a_disk_full_error_is_recognised_through_what_wraps_it():
    import errno

    from pony.orm.core import CommitException
    from pony.orm.dbapiprovider import OperationalError

    from hausbox.core.storage import is_storage_full

    try:
        try:
            raise OperationalError(Exception("database or disk is full"))
        except OperationalError as inner:
            raise CommitException("OperationalError: commit failed", []) from inner
    except CommitException as wrapped:
        assert is_storage_full(wrapped)
    assert is_storage_full(OSError(errno.ENOSPC, "No space left on device"))
    assert not is_storage_full(OperationalError(Exception("database is locked")))
