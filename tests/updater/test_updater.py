"""The update helper with real releases: wheels of this tree served by a local release host, installed
into a temporary install root whose service runs under a supervisor (see conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
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


def _site_packages(release: Path) -> Path:
    return next((release / "lib").glob("python3.*/site-packages"))


def _plant_a_distribution(release: Path, name: str) -> None:
    """A distribution the old release has and the new one's wheelhouse does not (dropped by it)."""
    site = _site_packages(release)
    (site / f"{name}.py").write_text("DROPPED = True\n")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text(f"{name}.py,,\n{name}-1.0.dist-info/METADATA,,\n{name}-1.0.dist-info/INSTALLER,,\n{name}-1.0.dist-info/RECORD,,\n")


def test_an_update_copies_the_current_release_and_reinstalls_only_what_changed(make_box, host, releases):
    host.publish("1.3.0", releases.archive("1.3.0"))
    box = make_box()
    old = layout.release_dir(box.root, "1.0.0")
    _plant_a_distribution(old, "zz_dropped")
    unchanged = next((_site_packages(old) / "__pycache__").glob("bottle.cpython-*.pyc"))
    start_update(Home(box), "1.3.0")
    state = finished(box)
    assert state["ok"] is True, state
    new = layout.release_dir(box.root, "1.3.0")
    # An unchanged dependency came with the copy, compiled file and all (pip did not reinstall it).
    copied = _site_packages(new) / "__pycache__" / unchanged.name
    assert copied.read_bytes() == unchanged.read_bytes() and copied.stat().st_mtime == unchanged.stat().st_mtime
    # What the new wheelhouse no longer has is gone from the new release, still in the old one.
    assert not (_site_packages(new) / "zz_dropped.py").exists() and not list(_site_packages(new).glob("zz_dropped-*"))
    assert (_site_packages(old) / "zz_dropped.py").exists()
    # The venv is the new folder's own: its scripts and pyvenv.cfg name it, never the old one.
    for path in [new / "pyvenv.cfg", *(p for p in (new / "bin").iterdir() if p.is_file() and not p.is_symlink())]:
        assert str(old) not in path.read_text(errors="replace"), path
    assert (new / "bin" / "pip").read_text().startswith(f"#!{new}/bin/python")
    assert layout.is_complete(box.root, "1.3.0") and layout.linked_version(box.root, "current") == "1.3.0"


def test_a_current_release_that_cannot_be_copied_over_gets_a_new_venv(make_box, host, releases):
    host.publish("1.4.0", releases.archive("1.4.0"))
    box = make_box()
    old = layout.release_dir(box.root, "1.0.0")
    shutil.rmtree(_site_packages(old) / "pip")  # the copy has no pip to install with
    home = Home(box)
    start_update(home, "1.4.0")
    state = finished(box)
    assert state["ok"] is True, state
    new = layout.release_dir(box.root, "1.4.0")
    assert (_site_packages(new) / "pip").is_dir()  # a new venv, with its own pip
    assert home.admin.get("/system/version").json()["current"] == "1.4.0"
