"""A helper that starts, says it is downloading, and then hangs: the launcher prefix of the tests
that need a helper still at work (``HAUSBOX_UPDATE_LAUNCHER="python fake_helper.py"``). The real
helper's command line follows as arguments, so its process is recognised as a helper."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from hausbox.updater.state import STATE, iso_now, read_json, write_json

job_path = Path(sys.argv[-1])
job = read_json(job_path) or {}
steps = [{"step": "started", "message": "fake", "at": iso_now()}, {"step": "download", "message": "Downloading forever", "at": iso_now()}]
write_json(job_path.with_name(STATE), {
    "id": job.get("id"), "kind": job.get("kind"), "pid": os.getpid(), "startedAt": iso_now(), "step": "download",
    "message": "Downloading forever", "done": False, "ok": None, "error": None, "steps": steps,
})  # fmt: skip
time.sleep(float(os.environ.get("FAKE_HELPER_SECONDS", "120")))
