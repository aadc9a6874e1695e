from __future__ import annotations

from typing import Iterator

import pytest

from tests.harness import Home
from tests.zigbee import Z2m


@pytest.fixture
def z2m(make_server, broker, mqtt_client) -> Iterator[Z2m]:
    yield Z2m(Home(make_server()), broker, mqtt_client)
