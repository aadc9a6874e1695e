"""Self-update over HTTP, the service's side, with the real helper (a corrupt download) or a fake one
that hangs (a helper still running, the watchdog), on an install root whose releases are stand-ins.
The end-to-end updates with real releases are tests/updater (``make test-update``)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hausbox.updater import layout
from hausbox.updater.state import read_json
from tests.harness import PASSWORD, Home, Server, wait_for
from tests.updater.release_host import ReleaseHost
from tests.wsclient import Collector, expect_welcome

FAKE_HELPER = Path(__file__).resolve().parents[1] / "updater" / "fake_helper.py"
HANGING = f"{sys.executable} {FAKE_HELPER}"


@pytest.fixture
def host():
    instance = ReleaseHost()
    yield instance
    instance.close()


@pytest.fixture
def root(tmp_path) -> Path:
    """An install root whose current release is a stand-in (the service itself runs from the test venv)."""
    install = tmp_path / "install"
    layout.release_dir(install, "1.0.0").mkdir(parents=True)
    layout.mark_complete(install, "1.0.0")
    layout.switch(install, "current", "1.0.0")
    return install


@pytest.fixture
def helpers():
    """Pids of the helpers a test started (through its server): ended at teardown."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def env(host: ReleaseHost, root: Path, **extra: str) -> dict[str, str]:
    return {"HAUSBOX_RELEASE_FEED": host.feed_url, "HAUSBOX_INSTALL_ROOT": str(root), "HAUSBOX_VERSION_FIRST_POLL_S": "0.1",
            "HAUSBOX_UPDATE_LAUNCHER": "detached", **extra}  # fmt: skip


def signed_in(server: Server) -> SimpleNamespace:
    """The admin of a server already set up, signed in again (what ``listen`` and ``ready`` use of a Home)."""
    pair = server.api().post("/auth/login", {"username": "admin", "password": PASSWORD}).json()
    return SimpleNamespace(server=server, admin_pair=pair, admin=server.api(pair["accessToken"]))


def listen(home: Home) -> Collector:
    ws = home.server.ws(home.admin_pair["accessToken"])
    expect_welcome(ws)
    return Collector(ws)


def ready(home: Home) -> None:
    wait_for(lambda: home.admin.get("/system/version").json()["updateAvailable"], timeout=10)


def helper_state(data_dir: Path) -> dict | None:
    return read_json(data_dir / "update" / "state.json")


def test_a_corrupt_download_is_refused_before_anything_is_installed(make_server, host, root):
    host.publish("9.0.0", b"PK not the announced archive", sha256="0" * 64)
    home = Home(make_server(env=env(host, root)))
    ready(home)
    info = home.admin.get("/system/version").json()
    assert info["selfUpdate"] == {"enabled": True, "method": "release-slots", "reason": None}
    events = listen(home)
    response = home.admin.post("/system/update")
    assert response.status_code == 202, response.text
    error = wait_for(lambda: events.events("system.update.error"), timeout=30)[0]["error"]
    assert "refused before installing anything" in error and "sha256 mismatch" in error
    steps = [e["step"] for e in events.events("system.update.progress")]
    assert steps == ["backup", "spawning", "spawned", "download", "verify"]
    assert layout.linked_version(root) == "1.0.0" and not layout.release_dir(root, "9.0.0").exists()
    assert not any((root / "downloads").iterdir())
    assert any("pre-v9.0.0" in p.name for p in (home.server.data_dir / "backups").iterdir())
    assert home.admin.get("/system/version").json()["update"]["running"] is False


def test_a_helper_still_running_stops_the_next_attempt_naming_it(make_server, host, root, helpers):
    host.publish("9.0.0", b"archive")
    first = make_server(env=env(host, root, HAUSBOX_UPDATE_LAUNCHER=HANGING))
    home = Home(first)
    ready(home)
    events = listen(home)
    assert home.admin.post("/system/update").status_code == 202
    wait_for(lambda: [e for e in events.events("system.update.progress") if e["step"] == "download"], timeout=15)
    pid = helper_state(first.data_dir)["pid"]
    helpers.append(pid)
    busy = home.admin.post("/system/update")
    assert busy.status_code == 409 and "already running" in busy.json()["error"]
    # The service restarts (as the helper would have it): the new process meets the helper at work.
    first.restart()
    home = signed_in(first)
    ready(home)
    events = listen(home)
    refused = home.admin.post("/system/update")
    assert refused.status_code == 409
    assert f"the updater of an earlier attempt (pid {pid}" in refused.json()["error"] and "still running" in refused.json()["error"]
    assert f"pid {pid}" in wait_for(lambda: events.events("system.update.error"), timeout=5)[0]["error"]
    # Once it is gone, the next attempt cleans what it left and starts.
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes(), timeout=5)
    assert home.admin.post("/system/update").status_code == 202
    helpers.append(wait_for(lambda: (helper_state(first.data_dir) or {}).get("pid") not in (None, pid) and helper_state(first.data_dir)["pid"], timeout=15))


def test_the_watchdog_releases_an_update_without_a_result(make_server, host, root, helpers):
    host.publish("9.0.0", b"archive")
    server = make_server(env=env(host, root, HAUSBOX_UPDATE_LAUNCHER=HANGING, HAUSBOX_UPDATE_WATCHDOG_S="3"))
    home = Home(server)
    ready(home)
    events = listen(home)
    assert home.admin.post("/system/update").status_code == 202
    error = wait_for(lambda: events.events("system.update.error"), timeout=15)[0]["error"]
    assert "no result from the updater after" in error and "may still finish" in error
    pid = helper_state(server.data_dir)["pid"]
    helpers.append(pid)
    assert Path(f"/proc/{pid}").exists()  # released, not killed: it may still finish
    assert home.admin.get("/system/version").json()["update"]["running"] is False
    # Past the window, the leftover helper is ended by the next attempt, which starts.
    assert home.admin.post("/system/update").status_code == 202
    wait_for(lambda: not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes(), timeout=10)
    helpers.append(wait_for(lambda: (helper_state(server.data_dir) or {}).get("pid") not in (None, pid) and helper_state(server.data_dir)["pid"], timeout=15))


def test_a_failed_backup_aborts_before_any_helper(make_server, host, root):
    host.publish("9.0.0", b"archive")
    server = make_server(env=env(host, root))
    home = Home(server)
    ready(home)
    backups = server.data_dir / "backups"
    shutil.rmtree(backups, ignore_errors=True)
    backups.write_text("a file where the backups folder should be")
    events = listen(home)
    assert home.admin.post("/system/update").status_code == 202
    error = wait_for(lambda: events.events("system.update.error"), timeout=15)[0]["error"]
    assert error.startswith("the pre-update backup failed, nothing was changed")
    assert [e["step"] for e in events.events("system.update.progress")] == ["backup"]
    assert not (server.data_dir / "update" / "job.json").exists() and helper_state(server.data_dir) is None
    assert layout.linked_version(root) == "1.0.0"


def test_no_newer_release_or_no_artifact_is_503_saying_which(make_server, host, root):
    host.publish("0.0.1")
    home = Home(make_server(env=env(host, root)))
    wait_for(lambda: home.admin.get("/system/version").json()["latest"], timeout=10)
    response = home.admin.post("/system/update")
    assert response.status_code == 503 and "no newer release known: the latest release is 0.0.1" in response.json()["error"]
    host.publish("9.0.0")  # announced without an artifact
    assert home.admin.post("/system/version/check").json()["updateAvailable"] is True
    response = home.admin.post("/system/update")
    assert response.status_code == 503 and "no wheelhouse artifact" in response.json()["error"]


def test_a_restart_that_never_comes_back_is_reported(make_server, root):
    # Off the appliance a restart needs a command; this one restarts nothing, so the restarter
    # sees no new process serve in time and says so.
    home = Home(make_server(env={"HAUSBOX_RESTART_COMMAND": "true", "HAUSBOX_UPDATE_HEALTH_TIMEOUT_S": "1", "HAUSBOX_UPDATE_LAUNCHER": "detached"}))
    assert home.admin.get("/system/version").json()["restart"] == {"enabled": True, "reason": None}
    events = listen(home)
    response = home.admin.post("/system/restart")
    assert response.status_code == 202 and response.json() == {"success": True, "message": "Restarting..."}
    error = wait_for(lambda: events.events("system.update.error"), timeout=20)[0]["error"]
    assert "the service did not serve again within 1" in error
    assert [e["step"] for e in events.events("system.update.progress")][:3] == ["restart", "spawning", "spawned"]
