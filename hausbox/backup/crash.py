"""Crash points for the tests of a kill -9 in the middle of a restore (never set in production).

``HAUSBOX_TEST_CRASH_AT=<point>`` makes the process kill itself (SIGKILL: no cleanup, no final
write) when it reaches that point: ``restore-stage:built`` (the staging folder complete, not yet
committed) or ``restore-apply:<phase>`` (see ``apply.py``).
"""

from __future__ import annotations

import os
import signal

ENV = "HAUSBOX_TEST_CRASH_AT"


def crash_point(name: str) -> None:
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
