"""The service's start stays light: what a boot does not need is imported when it is first used.

On the appliance the boot-to-healthy time is mostly the service's own start (imports run some twenty
times slower under emulation, several times slower on a small board): libraries only some requests or
channels use must not be imported by the start itself.
"""

from __future__ import annotations

import json
import subprocess
import sys

# What the start must not import: the HTTP client (feeds, channels, the export), JSON Schema (request
# bodies), web push and its aiohttp.
DEFERRED = ("requests", "jsonschema", "pywebpush", "aiohttp")

_START = """
import json, sys
from pathlib import Path
from hausbox.__main__ import main  # patches as the service does
from hausbox.api.app import build_app
from hausbox.config import Config
from hausbox.engine import Engine

engine = Engine(Config(data_dir=Path(sys.argv[1]), log_level="warn", mdns=False))
build_app(engine)
engine.start()
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.argv[2])))
engine.stop()
print(json.dumps(loaded))
"""


def test_the_start_imports_no_library_only_some_requests_use(tmp_path):
    done = subprocess.run([sys.executable, "-c", _START, str(tmp_path), json.dumps(DEFERRED)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
