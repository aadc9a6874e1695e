"""What the helper does: an update (download, verify, install, switch, restart, health, or rollback),
a restart (restart, health), and the boot-time recovery of an update a power cut interrupted."""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hausbox.updater import artifact, layout
from hausbox.updater.state import JOB, RUNNING_VERSION, STATE, folder, helper_alive, iso_now, read_json, write_json

log = logging.getLogger("hausbox.updater")

RESTART_TIMEOUT_S = 180.0
POLL_S = 0.5


class Failure(Exception):
    """A step failed: the message says which and what the box runs now."""


class Progress:
    """``state.json``: rewritten atomically at each step (the service follows it)."""

    def __init__(self, data_dir: Path, job: dict[str, Any]):
        self.path = folder(data_dir) / STATE
        self.state: dict[str, Any] = {
            "id": job.get("id"), "kind": job.get("kind"), "pid": os.getpid(), "startedAt": iso_now(),
            "step": "started", "message": "", "done": False, "ok": None, "error": None, "steps": [],
        }  # fmt: skip

    def step(self, step: str, message: str) -> None:
        log.info("%s: %s", step, message)
        self.state.update(step=step, message=message)
        self.state["steps"].append({"step": step, "message": message, "at": iso_now()})
        write_json(self.path, self.state)

    def finish(self, ok: bool, message: str) -> None:
        self.state.update(done=True, ok=ok, error=None if ok else message)
        self.step("done" if ok else "failed", message)


# ---- health ---------------------------------------------------------------------------------------
def serving_pid(data_dir: Path) -> int | None:
    marker = read_json(folder(data_dir) / RUNNING_VERSION) or {}
    return marker.get("pid") if isinstance(marker.get("pid"), int) else None


def serves(job: dict[str, Any], data_dir: Path, version: str | None, pid_before: int | None) -> bool:
    """A new service process (not ``pid_before``) of ``version`` (any when None) answers health.

    The anonymous health answer carries no version (spec, Versioning 3), so the version comes from
    the marker each process writes at start, with its pid; the 200 proves that process serves.
    """
    marker = read_json(folder(data_dir) / RUNNING_VERSION) or {}
    pid = marker.get("pid")
    if not isinstance(pid, int) or pid == pid_before or not Path(f"/proc/{pid}").exists():
        return False
    if version is not None and marker.get("version") != version:
        return False
    import requests  # here: the boot-time recovery never needs it, and each import is seconds on a slow board

    try:
        return requests.get(job["healthUrl"], timeout=2).status_code == 200
    except requests.RequestException:
        return False


def wait_serving(job: dict[str, Any], data_dir: Path, version: str | None, pid_before: int | None) -> bool:
    deadline = time.monotonic() + float(job.get("healthTimeoutS", 120))
    while time.monotonic() < deadline:
        if serves(job, data_dir, version, pid_before):
            return True
        time.sleep(POLL_S)
    return False


def restart_service(job: dict[str, Any]) -> str:
    """Run the restart command; a note on how it ended (the health wait decides the outcome)."""
    command = shlex.split(job["restartCommand"])
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=RESTART_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the restart command failed ({error})"
    if done.returncode != 0:
        return f"the restart command exited with {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}"
    return "restarted"


# ---- install --------------------------------------------------------------------------------------
def _pip_env() -> dict[str, str]:
    """pip sees no configuration of this machine: the wheelhouse is its only source."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _run(command: list[str], what: str, cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, env=_pip_env(), timeout=1800)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).decode(errors="replace")[-600:]
        raise Failure(f"{what} failed (exit {done.returncode}): {tail}")
    return done.stdout.decode(errors="replace")


KEPT_TOOLS = {"pip", "setuptools", "wheel"}  # what a venv brings besides the wheelhouse


def install_release(root: Path, version: str, wheelhouse: Path) -> None:
    """``releases/<version>``: a venv with hausbox==version and what it needs at the wheelhouse's versions, marked complete last.

    Made from a copy of the current release when there is one: an update changes a few of forty
    distributions, pip then reinstalls only those, and the copy keeps the others' compiled files
    (the longest part of an update on a slow board: a fresh venv and forty installs are minutes
    under emulation). From an empty venv when there is no current release, or when anything in
    the copy fails.
    """
    target = layout.release_dir(root, version)
    target.parent.mkdir(parents=True, exist_ok=True)
    current = layout.linked_version(root, "current")
    copied = False
    if current and current != version and layout.is_complete(root, current):
        try:
            _install_over_copy(layout.release_dir(root, current), target, wheelhouse, version)
            copied = True
        except (Failure, OSError) as error:
            log.warning("installing over a copy of %s failed, installing into a new venv: %s", current, error)
            shutil.rmtree(target, ignore_errors=True)
    if not copied:
        _install_fresh(target, wheelhouse, version)
    python = str(target / "bin" / "python")
    installed = _run([python, "-I", "-c", "import hausbox; print(hausbox.__version__)"], "importing the new release", target).strip()
    if installed != version:
        raise Failure(f"the wheelhouse installed hausbox {installed}, not {version}")
    # Thousands of files pip wrote are still in the page cache: on disk before the release is
    # called complete (and so before the switch), or a power cut leaves a complete-looking release
    # of empty files (seen in QEMU with ext4's delayed allocation).
    os.sync()
    layout.mark_complete(root, version)


def _pip_install(target: Path, wheelhouse: Path, version: str) -> list[str]:
    """hausbox==version and what it needs, each at the wheelhouse's version (a constraint, so that
    what is already installed at another version is replaced, and nothing is installed unasked)."""
    constraints = wheelhouse / "hausbox-constraints.txt"
    constraints.write_text("".join(pin + "\n" for pin in wheelhouse_pins(wheelhouse)))
    # -I and the release's own folder as cwd: no checkout nearby is taken for an installed hausbox.
    return [
        str(target / "bin" / "python"), "-I", "-m", "pip", "install", "--quiet", "--no-index", "--no-cache-dir",
        "--find-links", str(wheelhouse), "--constraint", str(constraints), f"hausbox=={version}",
    ]  # fmt: skip


def _install_fresh(target: Path, wheelhouse: Path, version: str) -> None:
    base_python = getattr(sys, "_base_executable", None) or sys.executable
    _run([base_python, "-I", "-m", "venv", str(target)], "creating the venv", target.parent)
    _run(_pip_install(target, wheelhouse, version), "pip install", target)


def _install_over_copy(source: Path, target: Path, wheelhouse: Path, version: str) -> None:
    copy_release(source, target)
    _run(_pip_install(target, wheelhouse, version), "pip install over the copy", target)
    installed = {_normalized(info.name.split("-")[0]) for info in target.glob("lib/python3*/site-packages/*.dist-info")}
    extra = sorted(installed - {pin.split("==")[0] for pin in wheelhouse_pins(wheelhouse)} - KEPT_TOOLS)
    if extra:  # the old release had them, the new one does not ask for them
        _run([str(target / "bin" / "python"), "-I", "-m", "pip", "uninstall", "--quiet", "--yes", *extra], "removing what the release dropped", target)


def copy_release(source: Path, target: Path) -> None:
    """``source``'s venv as ``target``: links kept (``bin/python`` names the system's interpreter),
    times kept (so the compiled files stay valid), the folder's own path rewritten in the scripts and
    ``pyvenv.cfg``, and never the complete marker (the copy is complete once marked so at the end)."""
    shutil.copytree(source, target, symlinks=True, ignore=lambda folder, names: [layout.COMPLETE] if Path(folder) == source else [])
    old, new = os.fsencode(str(source)), os.fsencode(str(target))
    for path in [*(target / "bin").iterdir(), target / "pyvenv.cfg"]:
        if path.is_file() and not path.is_symlink():
            text = path.read_bytes()
            if old in text:
                path.write_bytes(text.replace(old, new))


def wheelhouse_pins(wheelhouse: Path) -> list[str]:
    """``name==version`` of every wheel in the wheelhouse (names normalized as pip does)."""
    pins = {}
    for wheel in wheelhouse.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        pins[_normalized(name)] = f"{_normalized(name)}=={version}"
    return sorted(pins.values())


def _normalized(name: str) -> str:
    """A distribution's name as pip compares them (wheel and dist-info folder names escape it)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def fetch_and_install(job: dict[str, Any], root: Path, version: str, progress: Progress) -> None:
    announced = job["artifact"]
    downloads = root / "downloads"
    archive = downloads / f"hausbox-{version}.zip"
    wheelhouse = downloads / f"wheelhouse-{version}"
    try:
        progress.step("download", f"Downloading hausbox {version} ({announced['size']} bytes)")
        artifact.download(announced["url"], archive, int(announced["size"]))
        progress.step("verify", "Checking the size and sha256 of the download")
        artifact.verify(archive, announced)
        progress.step("install", f"Installing hausbox {version} beside the running release")
        artifact.unpack(archive, wheelhouse)
        layout.remove_incomplete(root, version)
        install_release(root, version, wheelhouse)
    except artifact.ArtifactError as error:
        raise Failure(f"refused before installing anything: {error}") from None
    except Failure:
        shutil.rmtree(layout.release_dir(root, version), ignore_errors=True)
        raise
    finally:
        archive.unlink(missing_ok=True)
        shutil.rmtree(wheelhouse, ignore_errors=True)


# ---- the two jobs ---------------------------------------------------------------------------------
def update(job: dict[str, Any], data_dir: Path, progress: Progress) -> str:
    root = Path(job["installRoot"])
    new = layout.check_version(job["to"])
    old = layout.linked_version(root, "current")
    if old is None or not layout.is_complete(root, old):
        raise Failure(f"{root}/current does not point at a complete release")
    if old == new:
        raise Failure(f"hausbox {new} is already the current release")
    if not layout.is_complete(root, new):
        fetch_and_install(job, root, new, progress)
    timeout = job.get("healthTimeoutS", 120)
    previous_before = layout.linked_version(root, "previous")
    progress.step("switch", f"Switching the current release from {old} to {new}")
    layout.switch(root, "previous", old)
    layout.switch(root, "current", new)
    pid_before = serving_pid(data_dir)
    progress.step("restart", f"Restarting the service on {new}")
    note = restart_service(job)
    progress.step("health", f"Waiting up to {timeout} s for {new} to serve ({note})")
    if wait_serving(job, data_dir, new, pid_before):
        layout.prune(root)
        return f"hausbox {new} is serving"
    progress.step("rollback", f"{new} did not serve within {timeout} s: switching back to {old}")
    layout.switch(root, "current", old)
    if previous_before and layout.is_complete(root, previous_before):
        layout.switch(root, "previous", previous_before)
    pid_before = serving_pid(data_dir)
    note = restart_service(job)
    if not wait_serving(job, data_dir, old, pid_before):
        raise Failure(f"{new} did not serve within {timeout} s; rolled back to {old}, which did not answer within {timeout} s either ({note})")
    shutil.rmtree(layout.release_dir(root, new), ignore_errors=True)
    raise Failure(f"{new} did not serve within {timeout} s; rolled back to {old}, which serves again")


def restart(job: dict[str, Any], data_dir: Path, progress: Progress) -> str:
    timeout = job.get("healthTimeoutS", 120)
    pid_before = serving_pid(data_dir)
    progress.step("restart", "Restarting the service")
    note = restart_service(job)
    progress.step("health", f"Waiting up to {timeout} s for the service to serve again ({note})")
    if not wait_serving(job, data_dir, None, pid_before):
        raise Failure(f"the service did not serve again within {timeout} s ({note})")
    return "the service serves again"


JOBS = {"update": update, "restart": restart}


def run(job_path: Path) -> int:
    job = read_json(job_path)
    if job is None or job.get("kind") not in JOBS:
        log.error("no job to run in %s", job_path)
        return 2
    data_dir = Path(job_path).resolve().parent.parent
    progress = Progress(data_dir, job)
    progress.step("started", f"The {job['kind']} helper started (pid {os.getpid()})")
    try:
        progress.finish(True, JOBS[job["kind"]](job, data_dir, progress))
        return 0
    except Failure as error:
        progress.finish(False, str(error))
    except Exception as error:  # the service must hear of any end, not wait for its watchdog
        log.exception("the %s helper failed", job["kind"])
        progress.finish(False, f"the {job['kind']} helper failed: {error.__class__.__name__}: {error}")
    return 1


def recover(data_dir: Path, root: Path) -> str:
    """At boot, before the service: an update a power cut (or a kill) interrupted is rolled back.

    The interrupted release is not trusted even if it was installed: the one the update started
    from becomes current again and the attempt is recorded as failed (its backup was kept).
    """
    state = read_json(folder(data_dir) / STATE)
    job = read_json(folder(data_dir) / JOB)
    if not state or not job or state.get("done") or state.get("id") != job.get("id") or helper_alive(state.get("pid")):
        return "nothing to recover"
    if job.get("kind") != "update":
        write_json(folder(data_dir) / STATE, {**state, "done": True, "ok": False, "error": "the restart was interrupted", "step": "failed"})
        return "an interrupted restart was recorded as failed"
    old = job.get("from")
    if old and layout.linked_version(root, "current") != old and layout.is_complete(root, old):
        layout.switch(root, "current", old)
    message = f"the update to {job.get('to')} was interrupted at step {state.get('step')}: {old} is the current release"
    steps = [*state.get("steps", []), {"step": "failed", "message": message, "at": iso_now()}]
    write_json(folder(data_dir) / STATE, {**state, "done": True, "ok": False, "error": message, "step": "failed", "message": message, "steps": steps})
    return message
