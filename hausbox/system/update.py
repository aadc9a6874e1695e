"""Self-update and restart, the service's side (spec: States, Self-update).

``POST /system/update`` takes the pre-update backup, then starts the update helper
(``python -m hausbox.updater``, see its package docstring) as a process that outlives this one, and
follows the helper's ``state.json``: each new step is a ``system.update.progress`` event, its end
a last ``done`` step or a ``system.update.error``. A service that starts while a helper still works
(the new release, restarted by it) resumes following it. ``POST /system/restart`` starts the same
helper for a restart only (the restarter).

Self-update is enabled only on the appliance: an install root (``HAUSBOX_INSTALL_ROOT``) whose
``current`` link names a release, and a release feed. The helper is started by the launcher
(``HAUSBOX_UPDATE_LAUNCHER``): ``auto`` is a transient systemd unit (``systemd-run --unit
hausbox-updater``, so that restarting the service does not end it) when this process runs under
systemd, else ``detached`` (a new session, for tests and machines without systemd); any other
value is a command prefix the helper's command line is appended to.

The watchdog: an attempt without a result 15 minutes after it started is released as failed (the
helper may still finish). A leftover helper that finished, or whose process is gone, is cleaned by
the next attempt; one still running within the watchdog's window makes the attempt fail, naming it.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import gevent

from hausbox import __version__
from hausbox.core.clock import parse_iso
from hausbox.core.errors import Conflict, ServiceUnavailable
from hausbox.system import events
from hausbox.system.versions import VersionChecker
from hausbox.updater import layout
from hausbox.updater.state import HELPER_MODULE, HELPER_NAMES, JOB, LOG, STATE, folder, helper_alive, read_json, write_json, write_running_version

log = logging.getLogger("hausbox.update")

FOLLOW_EVERY_S = 0.25
START_GRACE_S = 30.0  # a helper that has not written its state by then did not start
APPLIANCE_RESTART = "systemctl restart hausbox"
HELPER_STEPS_NOT_SHOWN = ("started", "done", "failed")  # the service says these itself


class SelfUpdate:
    def __init__(self, engine: Any, versions: VersionChecker):
        self._engine = engine
        self._config = engine.config
        self._versions = versions
        self.folder = folder(engine.config.data_dir)
        self.active: dict[str, Any] | None = None  # the attempt in progress: id, kind, step, message
        self._greenlet: gevent.Greenlet | None = None

    # ---- what is possible here ---------------------------------------------------------------
    def availability(self) -> dict[str, Any]:
        """``{enabled, method, reason}``: whether and how self-update works on this machine."""
        root = self._config.install_root
        reason = None
        if root is None:
            reason = "not an appliance: HAUSBOX_INSTALL_ROOT is not set"
        elif layout.linked_version(root) is None:
            reason = f"the install root {root} has no current release link"
        elif not self._versions.feed_url():
            reason = "no release feed configured (HAUSBOX_RELEASE_FEED or the setting system.update.feedUrl)"
        return {"enabled": reason is None, "method": "release-slots" if reason is None else None, "reason": reason}

    def restart_command(self) -> str | None:
        if self._config.restart_command:
            return self._config.restart_command
        return APPLIANCE_RESTART if self._config.install_root is not None else None

    def json(self) -> dict[str, Any]:
        command = self.restart_command()
        active = self.active or {}
        return {
            "selfUpdate": self.availability(),
            "restart": {
                "enabled": command is not None,
                "reason": None if command else "not an appliance and no HAUSBOX_RESTART_COMMAND: restart the process yourself",
            },
            "update": {"running": self.active is not None, "kind": active.get("kind"), "step": active.get("step"), "message": active.get("message")},
        }

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Say which version this process is (the helper's health proof) and resume following a
        helper that is still at work (it restarted us)."""
        write_running_version(self._config.data_dir, __version__)
        state, job = read_json(self.folder / STATE), read_json(self.folder / JOB)
        if state and job and state.get("id") == job.get("id") and not state.get("done") and helper_alive(state.get("pid")):
            # Followed, not claimed: a new attempt meets it as a helper still running and says so.
            self.active = {"id": job["id"], "kind": job["kind"], "step": state.get("step"), "message": state.get("message"), "resumed": True}
            self._greenlet = gevent.spawn(self._follow, job, None, max(0, len(state.get("steps", [])) - 1))

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)

    # ---- starting an attempt -----------------------------------------------------------------
    def start_update(self) -> str:
        availability = self.availability()
        if not availability["enabled"]:
            raise ServiceUnavailable(f"self-update is disabled here: {availability['reason']}")
        release = self._versions.newer_release()
        if release is None:
            latest = self._versions.latest
            why = f"the latest release is {latest['version']}" if latest else "the release feed has not been read yet"
            raise ServiceUnavailable(f"no newer release known: {why}, this is {__version__}")
        if release["artifact"] is None:
            raise ServiceUnavailable(f"release {release['version']} has no wheelhouse artifact to install")
        job = self._claim("update")
        job.update(to=release["version"], artifact=release["artifact"], installRoot=str(self._config.install_root))
        self._greenlet = gevent.spawn(self._run_update, job)
        return f"Updating to v{release['version']}..."

    def start_restart(self) -> str:
        if self.restart_command() is None:
            raise ServiceUnavailable("restart is disabled here: not an appliance (HAUSBOX_INSTALL_ROOT unset) and no HAUSBOX_RESTART_COMMAND")
        job = self._claim("restart")
        self._greenlet = gevent.spawn(self._run_restart, job)
        return "Restarting..."

    def _claim(self, kind: str) -> dict[str, Any]:
        if self.active is not None and not self.active.get("resumed"):
            raise Conflict(f"an {self.active['kind']} is already running (step {self.active['step']})")
        self._clear_leftover()
        self.stop()  # a resumed follower of an earlier helper must not report on this attempt
        job_id = uuid.uuid4().hex
        self.active = {"id": job_id, "kind": kind, "step": None, "message": None}
        bind = self._config.bind
        host = "127.0.0.1" if bind in ("", "0.0.0.0", "::") else bind
        return {
            "id": job_id, "kind": kind, "createdAtMs": self._engine.clock.now_ms(), "from": __version__,
            "installRoot": str(self._config.install_root) if self._config.install_root else None,
            "restartCommand": self.restart_command(), "healthUrl": f"http://{host}:{self._config.port}/api/v1/health",
            "healthTimeoutS": self._config.update_health_timeout_s,
        }  # fmt: skip

    def _clear_leftover(self) -> None:
        """A finished (or dead) helper's files are removed; a running one within the window stops us."""
        state = read_json(self.folder / STATE)
        if state and not state.get("done") and helper_alive(state.get("pid")):
            name = HELPER_NAMES.get(str(state.get("kind")), "helper")
            try:
                age_s = (self._engine.clock.now_ms() - parse_iso(str(state.get("startedAt")))) / 1000
            except ValueError:
                age_s = 0.0
            if age_s < self._config.update_watchdog_s:
                message = f"the {name} of an earlier attempt (pid {state['pid']}, started {state.get('startedAt')}, at step {state.get('step')}) is still running"
                self._engine.bus.emit(events.UPDATE_ERROR, error=message)
                raise Conflict(message)
            log.warning("ending the %s left from an earlier attempt (pid %s)", name, state["pid"])
            try:
                os.kill(state["pid"], signal.SIGTERM)
            except OSError:
                pass
        for name in (STATE, JOB):
            (self.folder / name).unlink(missing_ok=True)

    # ---- the attempt, in the background ------------------------------------------------------
    def _progress(self, step: str, message: str) -> None:
        if self.active is not None:
            self.active.update(step=step, message=message)
        self._engine.bus.emit(events.UPDATE_PROGRESS, step=step, message=message)

    def _fail(self, message: str) -> None:
        log.error("%s failed: %s", (self.active or {}).get("kind", "update"), message)
        self.active = None
        self._engine.bus.emit(events.UPDATE_ERROR, error=message)

    def _run_update(self, job: dict[str, Any]) -> None:
        self._progress("backup", f"Backing up before the update to {job['to']}")
        try:
            backups = getattr(self._engine, "backups", None)
            if backups is None:
                raise RuntimeError("backups are not available in this build")
            saved = backups.create_local(job["to"])
        except Exception as error:
            log.exception("pre-update backup failed")
            self._fail(f"the pre-update backup failed, nothing was changed: {error}")
            return
        log.info("pre-update backup saved: %s", saved)
        self._spawn(job)

    def _run_restart(self, job: dict[str, Any]) -> None:
        self._progress("restart", "Restarting the service")
        self._spawn(job)

    def _spawn(self, job: dict[str, Any]) -> None:
        name = HELPER_NAMES[job["kind"]]
        self._progress("spawning", f"Starting the {name}")
        try:
            write_json(self.folder / JOB, job)
            process = self._launch(job)
        except Exception as error:
            log.exception("the %s could not be started", name)
            self._fail(f"the {name} could not be started: {error}")
            return
        self._progress("spawned", f"The {name} is running")
        self._follow(job, process, 0)

    def _helper_command(self) -> list[str]:
        # The running release's own interpreter, resolved: ``current`` is about to be switched.
        python = Path(sys.prefix).resolve() / "bin" / "python"
        return [str(python) if python.exists() else sys.executable, "-I", "-m", HELPER_MODULE, "run", str(self.folder / JOB)]

    def _launch(self, job: dict[str, Any]) -> subprocess.Popen:
        mode = self._config.update_launcher
        if mode == "auto":
            mode = "systemd" if os.environ.get("INVOCATION_ID") and shutil.which("systemd-run") else "detached"
        prefix: list[str] = []
        if mode == "systemd":
            prefix = ["systemd-run", f"--unit=hausbox-{HELPER_NAMES[job['kind']]}", "--collect", "--quiet", "--"]
        elif mode != "detached":
            prefix = shlex.split(mode)
        with open(self.folder / LOG, "ab") as output:
            return subprocess.Popen(
                prefix + self._helper_command(), cwd=self.folder, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True,
            )  # fmt: skip

    def _follow(self, job: dict[str, Any], process: subprocess.Popen | None, seen: int) -> None:
        """Turn the helper's new steps into events until it ends, dies, or the watchdog fires."""
        name = HELPER_NAMES[job["kind"]]
        deadline_ms = job["createdAtMs"] + int(self._config.update_watchdog_s * 1000)
        launched_ms = self._engine.clock.now_ms()
        while True:
            gevent.sleep(FOLLOW_EVERY_S)
            exit_code = process.poll() if process is not None else None  # reaps it too
            state = read_json(self.folder / STATE)
            if state is not None and state.get("id") == job["id"]:
                steps = state.get("steps") or []
                for entry in steps[seen:]:
                    if entry.get("step") not in HELPER_STEPS_NOT_SHOWN:
                        self._progress(str(entry.get("step")), str(entry.get("message", "")))
                seen = len(steps)
                if state.get("done"):
                    if state.get("ok"):
                        self._progress("done", str(state.get("message", "")))
                        self.active = None
                    else:
                        self._fail(str(state.get("error") or f"the {name} failed"))
                    return
                if not helper_alive(state.get("pid")) and not (read_json(self.folder / STATE) or {}).get("done"):
                    self._fail(f"the {name} (pid {state.get('pid')}) ended without a result at step {state.get('step')}: see {self.folder / LOG}")
                    return
            elif self._engine.clock.now_ms() - launched_ms > START_GRACE_S * 1000 or (exit_code not in (None, 0) and process is not None):
                self._fail(f"the {name} did not start (exit {exit_code}): see {self.folder / LOG}")
                return
            if self._engine.clock.now_ms() > deadline_ms:
                minutes = self._config.update_watchdog_s / 60
                self._fail(f"no result from the {name} after {minutes:g} minutes: the attempt is released (the {name} may still finish)")
                return
