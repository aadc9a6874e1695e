"""The wheel carries every file the package ships beside its code.

A release is installed from its wheel (self-update, the appliance image): a migration, manifest,
text or console file left out of ``package_data`` works from the checkout and fails on the box
(the publishers' migration once did: "no such table: mqtt_brokers" at start).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_every_non_python_file_of_the_package(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: building in the checkout would leave build/ behind
    shutil.copytree(ROOT / "hausbox", source / "hausbox", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "out"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next((tmp_path / "out").glob("hausbox-*.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())
    files = [p.relative_to(source).as_posix() for p in (source / "hausbox").rglob("*") if p.is_file() and p.suffix != ".py"]
    assert files, "nothing to check: the copy is empty"
    assert sorted(f for f in files if f not in shipped) == []
