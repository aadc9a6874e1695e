"""Newer releases for the appliance's update scenarios: the committed tree (as the image is built)
with a bumped version, as wheelhouse archives (the hausbox wheel and every dependency at the top
level of a zip), the artifact the update helper installs (see hausbox/updater)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(command: list) -> None:
    done = subprocess.run([str(c) for c in command], capture_output=True)
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")[-3000:]


def newer(version: str, step: int = 1) -> str:
    major, minor, _patch = (int(p) for p in version.split("+")[0].split("-")[0].split("."))
    return f"{major}.{minor + step}.0"


class Releases:
    def __init__(self, work: Path):
        self.work = work
        self.source = work / "src"
        archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", "--prefix=src/", "HEAD"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", work], input=archive, check=True)
        self.deps = work / "deps"
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "-w", self.deps, self.source])
        for wheel in self.deps.glob("hausbox-*.whl"):
            wheel.unlink()  # each release brings its own
        self._archives: dict[tuple[str, bool], bytes] = {}

    def wheelhouse(self, version: str, broken: bool = False) -> bytes:
        """The archive of ``version``; a broken one exits at once when served (``python -m hausbox``)."""
        if (version, broken) not in self._archives:
            self._archives[(version, broken)] = self._build(version, broken)
        return self._archives[(version, broken)]

    def _build(self, version: str, broken: bool) -> bytes:
        source = self.work / f"src-{version}{'-broken' if broken else ''}"
        shutil.copytree(self.source, source)
        init = source / "hausbox" / "__init__.py"
        init.write_text(init.read_text().replace('__version__ = "', f'__version__ = "{version}"  # was "', 1))
        if broken:
            main = source / "hausbox" / "__main__.py"
            main.write_text('raise SystemExit("broken on purpose")\n' + main.read_text())
        out = self.work / f"wheel-{source.name}"
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check", "-w", out, source])
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for wheel in [*out.glob("hausbox-*.whl"), *self.deps.glob("*.whl")]:
                archive.write(wheel, wheel.name)
        return buffer.getvalue()
