"""The box is found on the LAN: ``_hausbox._tcp`` and ``_http._tcp`` are advertised with TXT records."""

from __future__ import annotations

import time

from zeroconf import ServiceBrowser, Zeroconf


def _browse(kind: str, port: int, seconds: float = 8.0) -> dict:
    zeroconf = Zeroconf()
    found: dict = {}

    class Listener:
        def add_service(self, zc, type_, name):
            info = zc.get_service_info(type_, name, 3000)
            if info and info.port == port:
                found[name] = info.properties

        def update_service(self, *args):
            pass

        def remove_service(self, *args):
            pass

    ServiceBrowser(zeroconf, kind, Listener())
    deadline = time.monotonic() + seconds
    while not found and time.monotonic() < deadline:
        time.sleep(0.1)
    zeroconf.close()
    return found


def test_the_service_is_advertised_with_its_version_and_api_path(make_server):
    server = make_server(env={"HAUSBOX_MDNS": "1"})
    for kind in ("_hausbox._tcp.local.", "_http._tcp.local."):
        found = _browse(kind, server.port)
        assert found, f"{kind} not advertised"
        properties = next(iter(found.values()))
        assert properties[b"api"] == b"/api/v1" and properties[b"version"]


def test_advertising_can_be_switched_off(make_server):
    server = make_server(env={"HAUSBOX_MDNS": "0"})
    assert _browse("_hausbox._tcp.local.", server.port, seconds=3) == {}
