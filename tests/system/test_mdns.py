"""The box is found on the LAN: ``_hausbox._tcp`` and ``_http._tcp`` are advertised with TXT records
(version, API path, instance id, whether setup is required) that follow the box and leave with it."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Callable

from zeroconf import ServiceBrowser, ServiceInfo, Zeroconf

from hausbox import __version__
from tests.harness import PASSWORD


class Watch:
    """A browser on the LAN (multicast on this machine): the TXT records of the instances on ``port``."""

    def __init__(self, kind: str, port: int):
        self.zeroconf = Zeroconf()
        self.port = port
        self.found: dict[str, dict] = {}
        self.lock = threading.Lock()
        watch = self

        self.servers: dict[str, str] = {}  # instance name -> the host name it is served from

        class Listener:
            def add_service(self, zc, type_, name):
                info = zc.get_service_info(type_, name, 3000)
                if info and info.port == watch.port:
                    with watch.lock:
                        watch.found[name] = dict(info.properties)
                        watch.servers[name] = info.server

            update_service = add_service

            def remove_service(self, zc, type_, name):
                with watch.lock:
                    watch.found.pop(name, None)

        self.browser = ServiceBrowser(self.zeroconf, kind, Listener())

    def wait(self, predicate: Callable[[dict], bool] = lambda properties: True, seconds: float = 8.0) -> dict:
        """The properties of our instance once they satisfy ``predicate``; {} if they never do."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                matching = [p for p in self.found.values() if predicate(p)]
            if matching:
                return matching[0]
            time.sleep(0.1)
        return {}

    def gone(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if not self.found:
                    return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self.browser.cancel()
        self.zeroconf.close()


def _browse(kind: str, port: int, seconds: float = 8.0) -> dict:
    watch = Watch(kind, port)
    try:
        return watch.wait(seconds=seconds)
    finally:
        watch.close()


def test_the_service_is_advertised_with_its_version_api_path_instance_id_and_setup_state(make_server):
    server = make_server(env={"HAUSBOX_MDNS": "1"})
    instance_id = json.loads((server.data_dir / "instance.json").read_text())["instanceId"]
    for kind in ("_hausbox._tcp.local.", "_http._tcp.local."):
        properties = _browse(kind, server.port)
        assert properties, f"{kind} not advertised"
        assert properties[b"api"] == b"/api/v1" and properties[b"ws"] == b"/ws"
        assert properties[b"version"] == __version__.encode()
        assert properties[b"instanceId"] == instance_id.encode()
        assert properties[b"setupRequired"] == b"true"


def test_the_records_follow_setup_and_are_withdrawn_at_stop(make_server):
    server = make_server(env={"HAUSBOX_MDNS": "1"})
    watch = Watch("_hausbox._tcp.local.", server.port)
    try:
        assert watch.wait(lambda p: p.get(b"setupRequired") == b"true"), "not advertised"
        setup = server.api().post("/auth/setup", {"username": "owner", "password": PASSWORD, "displayName": "Owner"})
        assert setup.status_code in (200, 201), setup.text
        assert watch.wait(lambda p: p.get(b"setupRequired") == b"false", seconds=10), f"still {watch.found}"
        assert server.stop() == 0
        assert watch.gone(seconds=5), f"still advertised after stop: {watch.found}"
    finally:
        watch.close()


def test_advertising_can_be_switched_off(make_server):
    server = make_server(env={"HAUSBOX_MDNS": "0"})
    assert _browse("_hausbox._tcp.local.", server.port, seconds=3) == {}


def test_a_host_name_taken_on_the_lan_gives_the_box_a_name_of_its_own(make_server):
    # Another host answers for this machine's name (a second box on the LAN, at an address not ours):
    # the service is served from hausbox-<first 6 of its instance id>.local instead.
    wanted = socket.gethostname().split(".")[0] or "hausbox"
    other_host = Zeroconf()
    squatter = ServiceInfo("_squat._tcp.local.", "squatter._squat._tcp.local.", port=9, server=f"{wanted}.local.", addresses=[socket.inet_aton("10.254.254.7")])
    other_host.register_service(squatter)
    try:
        server = make_server(env={"HAUSBOX_MDNS": "1"})
        instance_id = json.loads((server.data_dir / "instance.json").read_text())["instanceId"]
        watch = Watch("_hausbox._tcp.local.", server.port)
        try:
            assert watch.wait(), "not advertised"
            with watch.lock:
                servers = set(watch.servers.values())
            assert servers == {f"hausbox-{instance_id.replace('-', '')[:6]}.local."}, servers
        finally:
            watch.close()
    finally:
        other_host.unregister_all_services()
        other_host.close()
