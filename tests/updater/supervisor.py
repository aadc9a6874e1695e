"""The tests' stand-in for systemd: runs ``<root>/current/bin/python -m hausbox serve`` and keeps it
running (restarted when it exits, as ``Restart=always``); SIGHUP restarts it (the restart command the
service hands the helper is ``kill -HUP <this pid>``); SIGTERM stops both.

    python supervisor.py <install-root> <workdir>
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

root, workdir = Path(sys.argv[1]), Path(sys.argv[2])
env = {**os.environ, "HAUSBOX_RESTART_COMMAND": f"kill -HUP {os.getpid()}"}
child: subprocess.Popen | None = None
wanted = {"restart": False, "stop": False}


def spawn() -> subprocess.Popen:
    # The link is read at each start, as systemd's ExecStart=<root>/current/bin/python would.
    with open(workdir / "service.log", "ab") as log:
        return subprocess.Popen([str(root / "current" / "bin" / "python"), "-m", "hausbox", "serve"], cwd=workdir, env=env, stdout=log, stderr=log)


def end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


signal.signal(signal.SIGHUP, lambda *_: wanted.update(restart=True))
signal.signal(signal.SIGTERM, lambda *_: wanted.update(stop=True))
child = spawn()
while not wanted["stop"]:
    time.sleep(0.1)
    if wanted["restart"]:
        wanted["restart"] = False
        end(child)
        child = spawn()
    elif child.poll() is not None:
        time.sleep(0.5)
        child = spawn()
end(child)
