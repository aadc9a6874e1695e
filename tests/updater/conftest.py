"""Real releases for the update helper's tests: hausbox wheels built from this tree with a bumped
version, a wheelhouse of the dependencies (built once per session), and a box: an install root
with release 1.0.0 whose service runs under a tiny supervisor (``supervisor.py``) on a loopback port.

These tests build venvs and wait for restarts: ``make test-update`` runs them (``HAUSBOX_TEST_UPDATE=1``);
``make test`` skips them.
"""

from __future__ import annotations

import configparser
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import requests

from hausbox.updater import layout
from hausbox.updater.run import copy_release, install_release
from tests.harness import Api
from tests.updater.release_host import ReleaseHost
from tools.benchlib.mosquitto import free_port

ROOT = Path(__file__).resolve().parents[2]
SUPERVISOR = Path(__file__).with_name("supervisor.py")
OLD = "1.0.0"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("HAUSBOX_TEST_UPDATE") == "1":
        return
    skip = pytest.mark.skip(reason="builds real releases: run with make test-update")
    for item in items:
        if "releases" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


def requirements() -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return [line.strip() for line in parser["options"]["install_requires"].splitlines() if line.strip()]


def run(command: list[Any], **kwargs: Any) -> None:
    done = subprocess.run([str(c) for c in command], capture_output=True, **kwargs)
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")[-3000:]


def build_wheel(version: str, broken: bool, work: Path) -> Path:
    """A wheel of this tree as ``version``; a broken one exits at start (``hausbox serve`` fails)."""
    source = work / f"src-{version}"
    shutil.copytree(ROOT / "hausbox", source / "hausbox", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    init = source / "hausbox" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', f'__version__ = "{version}"  # was "', 1))
    if broken:
        cli = source / "hausbox" / "cli.py"
        cli.write_text(cli.read_text().replace("def run(argv: list[str]) -> int:\n", "def run(argv: list[str]) -> int:\n    raise SystemExit('broken on purpose')\n", 1))
    out = work / f"wheel-{version}"
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, source])
    wheel = next(out.glob("hausbox-*.whl"))
    with zipfile.ZipFile(wheel) as built:
        shipped = set(built.namelist())
    # A release installed from its wheel must find every migration the engine runs at start.
    missing = [p.relative_to(source).as_posix() for p in (source / "hausbox").rglob("migrations/*.sql") if p.relative_to(source).as_posix() not in shipped]
    assert not missing, f"the wheel lacks migrations (setup.cfg, options.package_data): {missing}"
    return wheel


class Releases:
    """Wheelhouse archives (bytes) per version, and a ready venv of the old release to copy."""

    def __init__(self, work: Path):
        self.work = work
        self.deps = work / "deps"
        run([sys.executable, "-m", "pip", "wheel", "--quiet", "-w", self.deps, *requirements()])
        self._archives: dict[str, bytes] = {}
        self.template = work / "template"
        wheelhouse = work / f"wheelhouse-{OLD}"
        self._unpacked(OLD, False, wheelhouse)
        install_release(self.template, OLD, wheelhouse)

    def _unpacked(self, version: str, broken: bool, target: Path) -> None:
        shutil.copytree(self.deps, target)
        shutil.copy(build_wheel(version, broken, self.work), target)

    def archive(self, version: str, broken: bool = False) -> bytes:
        if version not in self._archives:
            folder = self.work / f"house-{version}"
            self._unpacked(version, broken, folder)
            path = self.work / f"hausbox-{version}.zip"
            with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
                for wheel in sorted(folder.iterdir()):
                    archive.write(wheel, wheel.name)
            self._archives[version] = path.read_bytes()
        return self._archives[version]


@pytest.fixture(scope="session")
def releases(tmp_path_factory: pytest.TempPathFactory) -> Releases:
    return Releases(tmp_path_factory.mktemp("releases"))


class Box:
    """An install root with the old release current, its service under the supervisor."""

    def __init__(self, base: Path, releases: Releases, host: ReleaseHost, env: dict[str, str]):
        self.root = base / "install"
        self.data_dir = base / "data"
        self.work = base / "work"
        self.work.mkdir(parents=True)
        layout.release_dir(self.root, OLD).parent.mkdir(parents=True)
        copy_release(layout.release_dir(releases.template, OLD), layout.release_dir(self.root, OLD))
        layout.mark_complete(self.root, OLD)
        layout.switch(self.root, "current", OLD)
        self.port = free_port()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "HAUSBOX_"))},
            "PORT": str(self.port), "HAUSBOX_BIND": "127.0.0.1", "HAUSBOX_DATA_DIR": str(self.data_dir), "HAUSBOX_MDNS": "0",
            "HAUSBOX_BCRYPT_ROUNDS": "4", "HAUSBOX_STRICT_EVENTS": "1", "TZ": "UTC", "HAUSBOX_INSTALL_ROOT": str(self.root),
            "HAUSBOX_RELEASE_FEED": host.feed_url, "HAUSBOX_VERSION_FIRST_POLL_S": "0.2", "HAUSBOX_UPDATE_LAUNCHER": "detached",
            **env,
        }  # fmt: skip
        self.supervisor: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, token: str | None = None) -> Api:
        return Api(self.url, token)

    def start(self) -> "Box":
        self.supervisor = subprocess.Popen([sys.executable, SUPERVISOR, self.root, self.work], env=self.env)
        self.wait_serving()
        return self

    def wait_serving(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/api/v1/health", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise AssertionError(f"the box did not serve within {timeout} s:\n{self.log()}")

    def log(self) -> str:
        path = self.work / "service.log"
        return path.read_text(errors="replace")[-5000:] if path.exists() else ""

    def stop(self) -> None:
        if self.supervisor is not None and self.supervisor.poll() is None:
            self.supervisor.send_signal(signal.SIGTERM)
            try:
                self.supervisor.wait(30)
            except subprocess.TimeoutExpired:
                self.supervisor.kill()
                self.supervisor.wait()


@pytest.fixture
def host() -> Iterator[ReleaseHost]:
    instance = ReleaseHost()
    yield instance
    instance.close()


@pytest.fixture
def make_box(tmp_path: Path, releases: Releases, host: ReleaseHost) -> Iterator[Callable[..., Box]]:
    boxes: list[Box] = []

    def make(**env: str) -> Box:
        box = Box(tmp_path / f"box{len(boxes)}", releases, host, env)
        boxes.append(box)
        return box.start()

    yield make
    for box in boxes:
        box.stop()
