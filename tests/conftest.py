from __future__ import annotations

from typing import Iterator

import pytest

from tests.harness import Home, Server


@pytest.fixture
def make_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """Start servers on fresh data directories (or a given one); all stopped at teardown."""
    started: list[Server] = []

    def make(data_dir=None, env: dict[str, str] | None = None, start: bool = True, module: str = "hausbox") -> Server:
        server = Server(data_dir or tmp_path_factory.mktemp("data") / "hausbox", env, module)
        started.append(server)
        return server.start() if start else server

    yield make
    for server in started:
        server.kill()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("data") / "hausbox").start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def home(module_server: Server) -> Home:
    """One server per test module, set up with its first administrator."""
    return Home(module_server)


@pytest.fixture
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A real mosquitto on a loopback port (a fresh one per test)."""
    from tests.broker import Broker

    instance = Broker(tmp_path_factory.mktemp("mosquitto")).start()
    yield instance
    instance.stop()


@pytest.fixture
def mqtt_client(broker) -> Iterator:
    from tests.broker import Mqtt

    client = Mqtt(broker)
    yield client
    client.close()


@pytest.fixture
def small_disk(tmp_path) -> Iterator:
    """A real 8 MB file system (tmpfs), for full-disk scenarios (``tests/disk.py``)."""
    from tests.disk import mounted_small_disk

    yield from mounted_small_disk(tmp_path / "disk")


@pytest.fixture
def make_house(tmp_path) -> Iterator:
    """In-process homes (``tests/inprocess.py``): ``make_house(**options)`` builds a ``House`` on a fresh
    data directory (or ``data_dir=``); every one is stopped at teardown."""
    from tests.inprocess import House

    made: list = []

    def make(data_dir=None, **options):
        house = House(data_dir or tmp_path / f"data{len(made)}", **options)
        made.append(house)
        return house

    yield make
    for house in made:
        house.stop()


@pytest.fixture
def house(make_house):
    """An in-process home on the real clock, with the fake integration (which echoes orders back)."""
    return make_house()
