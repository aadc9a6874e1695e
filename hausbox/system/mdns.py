"""mDNS advertisement, so the box is found on the LAN: ``_hausbox._tcp`` and ``_http._tcp``.

TXT records: ``version``, ``api`` (the API path), ``ws``, ``instanceId`` (this deployment's id, the
marker in the data dir) and ``setupRequired`` (``true`` until the first administrator exists). They
follow the box: a watcher re-reads them every few seconds (an in-memory check) and updates the
records when one changes (setup done); the version changes with the process (an update restarts
it). The addresses are re-read less often: a new one (DHCP came late, a cable moved) re-registers
everything on fresh sockets. ``close`` withdraws the records (goodbye packets) at stop.

The host name is the machine's (``hausbox.local`` on the appliance). When another host already
answers for that name, a second box takes ``hausbox-<first 6 of its instance id>.local`` instead, so
two boxes on one LAN are both reachable; the service names follow the host name.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any, Callable

import gevent

from hausbox import __version__
from hausbox.api.routing import API_PREFIX

log = logging.getLogger("hausbox.mdns")

KINDS = ("_hausbox._tcp.local.", "_http._tcp.local.")
WATCH_EVERY_S = 2.0  # how soon a TXT change (setup done) reaches the LAN
ADDRESSES_EVERY = 5  # the addresses are re-read every 5th watch (10 s)
HOST_PROBE_MS = 1500  # how long another host may take to say it holds our host name


def txt_properties(engine: Any) -> dict[str, str]:
    return {
        "version": __version__,
        "api": API_PREFIX,
        "ws": "/ws",
        "instanceId": engine.identity.instance_id,
        "setupRequired": "false" if engine.auth.has_users() else "true",
    }


class Advertiser:
    """The registered services, kept current by a watcher greenlet until ``close``."""

    def __init__(self, port: int, properties: Callable[[], dict[str, str]], instance_id: str):
        self._port = port
        self._properties = properties
        self._instance_id = instance_id
        self._zeroconf: Any = None
        self._services: list[Any] = []
        self._addresses: list[str] = []
        self._published: dict[str, str] = {}
        self._watcher: gevent.Greenlet | None = None
        self.host = ""

    # ---- registration ----------------------------------------------------------------------
    def register(self) -> None:
        from zeroconf import Zeroconf

        self._addresses = _addresses()
        self._zeroconf = Zeroconf()
        self.host = self._free_host_name(socket.gethostname().split(".")[0] or "hausbox")
        self._published = self._properties()
        instance = self.host if self.host.startswith("hausbox") else f"hausbox-{self.host}"
        self._services = [self._info(kind, f"{instance}.{kind}") for kind in KINDS]
        for info in self._services:
            self._zeroconf.register_service(info, allow_name_change=True)  # the name may change: a conflict
        log.info("advertised on mDNS as %s.local (port %d, %s)", self.host, self._port, ", ".join(self._addresses))

    def _info(self, kind: str, name: str) -> Any:
        from zeroconf import ServiceInfo

        addresses = [socket.inet_aton(a) for a in self._addresses]
        return ServiceInfo(kind, name, port=self._port, properties=self._published, server=f"{self.host}.local.", addresses=addresses)

    def _free_host_name(self, wanted: str) -> str:
        """``wanted``, unless another host answers for ``wanted.local``: then a name of our own."""
        from zeroconf import AddressResolverIPv4

        resolver = AddressResolverIPv4(f"{wanted}.local.")
        # On zeroconf's own loop: its blocking ``request`` refuses to run under gevent's threads.
        asked = asyncio.run_coroutine_threadsafe(resolver.async_request(self._zeroconf, HOST_PROBE_MS), self._zeroconf.loop)
        if not asked.result(HOST_PROBE_MS / 1000 + 2):
            return wanted
        theirs = set(resolver.parsed_addresses()) - set(self._addresses)
        if not theirs:
            return wanted  # our own records, still cached from a previous run
        unique = f"hausbox-{self._instance_id.replace('-', '')[:6]}"
        log.warning("%s.local is already taken on this LAN (by %s): advertising as %s.local", wanted, ", ".join(sorted(theirs)), unique)
        return unique

    def _unregister(self) -> None:
        zeroconf, self._zeroconf = self._zeroconf, None
        if zeroconf is None:
            return
        try:
            for info in self._services:
                zeroconf.unregister_service(info)  # goodbye packets: the records leave the LAN's caches
            zeroconf.close()
        except Exception:
            log.debug("mDNS withdrawal failed", exc_info=True)

    # ---- following changes -----------------------------------------------------------------
    def watch(self) -> None:
        self._watcher = gevent.spawn(self._watch)

    def _watch(self) -> None:
        rounds = 0
        while True:
            gevent.sleep(WATCH_EVERY_S)
            rounds += 1
            try:
                if rounds % ADDRESSES_EVERY == 0 and _addresses() != self._addresses:
                    log.info("mDNS: the addresses changed (%s): registering again", ", ".join(_addresses()))
                    self._unregister()
                    self.register()
                    continue
                properties = self._properties()
                if properties != self._published:
                    self._published = properties
                    self._services = [self._info(info.type, info.name) for info in self._services]
                    for info in self._services:
                        self._zeroconf.update_service(info)
                    log.info("mDNS records updated: %s", properties)
            except Exception:
                log.warning("mDNS update failed", exc_info=True)

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.kill()
        self._unregister()


def advertise(port: int, engine: Any) -> Advertiser | None:
    """Register both services and follow changes; on a machine without multicast, log why and carry on."""
    try:
        advertiser = Advertiser(port, lambda: txt_properties(engine), engine.identity.instance_id)
        advertiser.register()
        advertiser.watch()
        return advertiser
    except Exception as error:
        log.warning("mDNS advertisement unavailable: %s", error)
        return None


def _addresses() -> list[str]:
    from zeroconf import get_all_addresses

    addresses = sorted(a for a in get_all_addresses() if not a.startswith("127."))
    return addresses or ["127.0.0.1"]
