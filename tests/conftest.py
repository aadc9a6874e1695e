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
def engine(tmp_path):
    """An in-process Engine with a connected fake integration: ``(engine, fake, recorder)``."""
    from tests.inprocess import Recorder, build_engine

    instance, fake = build_engine(tmp_path / "data")
    recorder = Recorder(instance)
    yield instance, fake, recorder
    instance.stop()


@pytest.fixture
def make_rig(tmp_path) -> Iterator:
    """In-process engines on a ManualClock in Europe/Paris (``start``: local time), stopped at teardown."""
    from tests.modes.rig import Rig

    made: list = []

    def make(start: str = "2026-03-28 12:00"):
        rig = Rig(tmp_path / f"data{len(made)}", start)
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.stop()


@pytest.fixture
def rig(make_rig):
    return make_rig()
