"""QEMU smoke tests of the appliance image (``make qemu-smoke``: builds the image when missing, sets
``HAUSBOX_IMAGE_TESTS=1``). ``make test`` skips them: each boots a VM under TCG for minutes.

The image is ``firmware-image/out/amd64/`` (``HAUSBOX_IMAGE`` names another). With the tests asked
for, a missing image is an error, not a skip.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from tests.image.qemu import Box

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "firmware-image" / "out" / "amd64"
BOOT_TO_HEALTHY_S = 40.0  # the bar under TCG on this machine kind
BOOT_TIMEOUT_S = 240.0  # beyond the bar, how long a boot may take before the test gives up
FIGURES: dict[str, str] = {}  # printed at the end of the run
IDENTITIES: list[tuple[str, str]] = []  # (machine id, instance id) of each box booted in this run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("HAUSBOX_IMAGE_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="boots the appliance image in QEMU: run with make qemu-smoke")
    for item in items:
        if item.nodeid.startswith("tests/image/"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    if FIGURES:
        terminalreporter.section("appliance image figures")
        for name, value in FIGURES.items():
            terminalreporter.write_line(f"{name}: {value}")


@pytest.fixture(scope="session")
def build_info() -> dict:
    info_path = Path(os.environ["HAUSBOX_IMAGE"]).with_name("build-info.json") if os.environ.get("HAUSBOX_IMAGE") else OUT / "build-info.json"
    assert info_path.exists(), f"no image built ({info_path} missing): make image"
    info = json.loads(info_path.read_text())
    info["path"] = info_path.with_name(info["image"])
    assert info["path"].exists(), f"{info['path']} missing: make image"
    return info


@pytest.fixture
def box(build_info: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    """A fresh box (a new disk over the pristine image), powered off at the end whatever happened."""
    box = Box(build_info["path"], tmp_path_factory.mktemp("box"))
    try:
        yield box
    finally:
        box.close()
