"""The browser tests: a real server, a real chromium, one of each per module."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.console.browser import Browser, chromium_path, driver_path
from tests.console.homes import ZigbeeHome, zigbee_home



@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not (chromium_path() and driver_path()):
        pytest.skip("chromium and chromium-driver are not installed (make test-deps installs them)")
    instance = Browser()
    yield instance
    instance.quit()


@pytest.fixture(scope="package")
def house(tmp_path_factory) -> Iterator[ZigbeeHome]:
    """The zigbee2mqtt home the page tests share (one server and one broker for all of them)."""
    instance = zigbee_home(tmp_path_factory)
    yield instance
    instance.stop()
