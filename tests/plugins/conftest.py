from __future__ import annotations

from typing import Iterator

import pytest

from tests.plugins.helpers import Host


@pytest.fixture
def host() -> Iterator[Host]:
    """A local registry and release host (a thread)."""
    server = Host()
    yield server
    server.close()


@pytest.fixture
def plugin_house(make_house, host):
    """An in-process home, started, whose plugin registry and release host are ``host``."""
    house = make_house()
    house.engine.settings.set_many(host.settings())
    house.start()
    return house
