"""mDNS advertisement, so the box is found on the LAN: ``_hausbox._tcp`` and ``_http._tcp``."""

from __future__ import annotations

import logging
import socket
from typing import Any

from hausbox import __version__
from hausbox.api.routing import API_PREFIX

log = logging.getLogger("hausbox.mdns")


class Advertiser:
    def __init__(self, zeroconf: Any, services: list[Any]):
        self._zeroconf = zeroconf
        self._services = services

    def close(self) -> None:
        try:
            for info in self._services:
                self._zeroconf.unregister_service(info)
            self._zeroconf.close()
        except Exception:
            log.debug("mDNS shutdown failed", exc_info=True)


def advertise(port: int) -> Advertiser | None:
    """Register both services; on a machine without multicast, log why and carry on."""
    try:
        from zeroconf import ServiceInfo, Zeroconf

        host = socket.gethostname().split(".")[0] or "hausbox"
        properties = {"version": __version__, "api": API_PREFIX, "ws": "/ws"}
        zeroconf = Zeroconf()
        services = [
            ServiceInfo(
                kind,
                f"hausbox-{host}.{kind}",
                port=port,
                properties=properties,
                server=f"{host}.local.",
                addresses=[socket.inet_aton(a) for a in _addresses()],
            )
            for kind in ("_hausbox._tcp.local.", "_http._tcp.local.")
        ]
        for info in services:
            zeroconf.register_service(info, allow_name_change=True)
        log.info("advertised on mDNS as hausbox-%s (port %d)", host, port)
        return Advertiser(zeroconf, services)
    except Exception as error:
        log.warning("mDNS advertisement unavailable: %s", error)
        return None


def _addresses() -> list[str]:
    from zeroconf import get_all_addresses

    addresses = [a for a in get_all_addresses() if not a.startswith("127.")]
    return addresses or ["127.0.0.1"]
