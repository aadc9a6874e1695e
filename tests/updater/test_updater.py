"""The update helper with real releases: wheels of this tree served by a local release host, installed
into a temporary install root whose service runs under a supervisor (see conftest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hausbox.updater import layout
from hausbox.updater.state import read_json
from tests.harness import Home, wait_for


def finished(box) -> dict:
    """The helper's final state (it ends after the service it restarted serves)."""
    return wait_for(lambda: (lambda s: s if s and s.get("done") else None)(read_json(box.data_dir / "update" / "state.json")), timeout=240, interval=0.5)


def backups(box) -> list[str]:
    folder = box.data_dir / "backups"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def start_update(home: Home, version: str) -> None:
    wait_for(lambda: home.admin.get("/system/version").json()["latest"] == version, timeout=15)
    info = home.admin.get("/system/version").json()
    assert info["current"] == "1.0.0" and info["updateAvailable"] is True
    assert info["selfUpdate"] == {"enabled": True, "method": "release-slots", "reason": None}
    response = home.admin.post("/system/update")
    assert response.status_code == 202, response.text
    assert response.json() == {"success": True, "message": f"Updating to v{version}..."}
    again = home.admin.post("/system/update")
    assert again.status_code == 409, again.text


def test_an_update_installs_switches_and_serves_the_same_data(make_box, host, releases):
    host.publish("1.1.0", releases.archive("1.1.0"))
    box = make_box()
    home = Home(box)
    zone = home.admin.post("/zones", {"name": "Kitchen"}).json()
    old_pid = read_json(box.data_dir / "update" / "running-version.json")["pid"]
    start_update(home, "1.1.0")
    state = finished(box)
    assert state["ok"] is True, state
    steps = [entry["step"] for entry in state["steps"]]
    assert steps == ["started", "download", "verify", "install", "switch", "restart", "health", "done"]
    marker = read_json(box.data_dir / "update" / "running-version.json")
    assert marker["version"] == "1.1.0" and marker["pid"] != old_pid
    info = home.admin.get("/system/version").json()  # the same token: the data dir is the same
    assert info["current"] == "1.1.0" and info["updateAvailable"] is False
    assert home.admin.get(f"/zones/{zone['id']}").json()["name"] == "Kitchen"
    assert layout.linked_version(box.root, "current") == "1.1.0" and layout.linked_version(box.root, "previous") == "1.0.0"
    assert (box.root / "current" / "bin" / "python").exists()
    assert any("pre-v1.1.0" in name for name in backups(box))
    assert not any((box.root / "downloads").iterdir())


def test_a_release_that_never_serves_is_rolled_back(make_box, host, releases):
    host.publish("1.2.0", releases.archive("1.2.0", broken=True))
    box = make_box(HAUSBOX_UPDATE_HEALTH_TIMEOUT_S="15")
    home = Home(box)
    zone = home.admin.post("/zones", {"name": "Cellar"}).json()
    start_update(home, "1.2.0")
    state = finished(box)
    assert state["ok"] is False
    assert "1.2.0 did not serve within 15" in state["error"] and "rolled back to 1.0.0, which serves again" in state["error"]
    assert [e["step"] for e in state["steps"]][-4:] == ["restart", "health", "rollback", "failed"]
    box.wait_serving()
    # The rolled-back service followed the helper from its start and sees its end within a poll.
    info = wait_for(lambda: (lambda i: not i["update"]["running"] and i)(home.admin.get("/system/version").json()), timeout=5)
    assert info["current"] == "1.0.0"
    assert home.admin.get(f"/zones/{zone['id']}").json()["name"] == "Cellar"
    assert layout.linked_version(box.root, "current") == "1.0.0"
    assert not layout.release_dir(box.root, "1.2.0").exists()
    assert any("pre-v1.2.0" in name for name in backups(box))  # the backup stays
    assert json.loads((box.data_dir / "update" / "running-version.json").read_text())["version"] == "1.0.0"
    assert os.path.exists(Path(f"/proc/{read_json(box.data_dir / 'update' / 'running-version.json')['pid']}"))


def test_a_restart_goes_through_the_restarter(make_box, host, releases):
    box = make_box()
    home = Home(box)
    assert home.admin.get("/system/version").json()["restart"] == {"enabled": True, "reason": None}
    old_pid = read_json(box.data_dir / "update" / "running-version.json")["pid"]
    response = home.admin.post("/system/restart")
    assert response.status_code == 202, response.text
    state = finished(box)
    assert state["ok"] is True and state["kind"] == "restart", state
    assert [e["step"] for e in state["steps"]] == ["started", "restart", "health", "done"]
    marker = read_json(box.data_dir / "update" / "running-version.json")
    assert marker["pid"] != old_pid and marker["version"] == "1.0.0"
    assert home.admin.get("/system/version").json()["current"] == "1.0.0"
