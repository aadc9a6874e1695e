"""One outbound GET to a camera, and what it may reach.

The host is resolved once; the address it resolves to is checked and is the one connected to (a
name that resolves elsewhere between the check and the connection cannot redirect us). Refused: the
box itself (loopback, the unspecified address, any address of its own interfaces), link-local
addresses (cloud metadata services live there), multicast and reserved ranges; an address listed in
the ``camera_local_addresses`` setting is let through (a camera served by the box itself in tests).
A redirect is followed only to the same scheme, host and port, at most ``MAX_REDIRECTS`` times.
Credentials in the URL's user-info are sent as HTTP basic authentication.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from typing import Iterable
from urllib.parse import unquote, urljoin, urlsplit

from hausbox.core.errors import ApiError

MAX_REDIRECTS = 3
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # 0.x.x.x reaches the box itself on Linux
Address = tuple[int, tuple]  # an address family and a socket address, as getaddrinfo gives them


class BadGateway(ApiError):
    status = 502


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int


@dataclass(frozen=True)
class Timeouts:
    connect: float
    read: float


def origin_of(url: str) -> Origin:
    """The scheme, host and port of an http(s) URL; ValueError when it is none."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("an http(s) URL with a host is expected")
    port = parts.port  # raises ValueError for a port out of range
    return Origin(scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80))


def refusal(address: str, allowed: Iterable[str] = ()) -> str | None:
    """Why the proxy may not connect to ``address``, or None when it may."""
    ip = ipaddress.ip_address(address)
    if str(ip) in allowed:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or (ip.version == 4 and ip in _THIS_NETWORK):
        return "the box itself"
    if ip.is_link_local or ip.is_multicast or ip.is_reserved:
        return "a link-local, multicast or reserved address"
    if _is_own_address(ip):
        return "the box itself"
    return None


def _is_own_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``ip`` belongs to one of the box's interfaces: binding to it succeeds only then."""
    with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((str(ip), 0))
        except OSError:
            return False
    return True


def resolve(origin: Origin, allowed: Iterable[str]) -> Address:
    """The one address the proxy connects to for ``origin``: its host's first, once checked."""
    try:
        found = socket.getaddrinfo(origin.host, origin.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise BadGateway("The camera's host name does not resolve") from None
    family, _, _, _, sockaddr = found[0]
    reason = refusal(sockaddr[0], allowed)
    if reason is not None:
        raise BadGateway(f"The camera's address is refused: {reason}")
    return family, sockaddr


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP connection to a host name that connects to the address already checked, ``pinned``
    (address, connect timeout), looking nothing up again; ``timeout`` bounds each read."""

    pinned: tuple[Address, float]

    def connect(self) -> None:
        (family, sockaddr), connect_timeout = self.pinned
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(connect_timeout)
            self.sock.connect(sockaddr)
        except OSError:
            self.sock.close()
            raise
        self.sock.settimeout(self.timeout)


class _PinnedTlsConnection(http.client.HTTPSConnection, _PinnedConnection):
    """The same over TLS: the certificate is checked against the host name, not the address."""


def _connection(origin: Origin, address: Address, timeouts: Timeouts) -> http.client.HTTPConnection:
    if origin.scheme == "https":
        connection: _PinnedConnection = _PinnedTlsConnection(origin.host, origin.port, timeout=timeouts.read, context=ssl.create_default_context())
    else:
        connection = _PinnedConnection(origin.host, origin.port, timeout=timeouts.read)
    connection.pinned = (address, timeouts.connect)
    return connection


class Upstream:
    """A camera's answer: its status and headers, its body read as it comes; ``close`` ends the
    connection too (a stream left early must not keep the camera's socket open)."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse):
        self._connection, self._response = connection, response
        self.status = response.status

    def header(self, name: str) -> str | None:
        return self._response.getheader(name)

    def read1(self, size: int) -> bytes:
        return self._response.read1(size)

    def close(self) -> None:
        self._response.close()
        self._connection.close()

    @property
    def closed(self) -> bool:
        return self._response.isclosed() and self._connection.sock is None


def _request(origin: Origin, address: Address, url: str, authorization: str | None, timeouts: Timeouts) -> Upstream:
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = _connection(origin, address, timeouts)
    headers = {"Accept": "*/*", "User-Agent": "hausbox-camera-proxy"}
    if authorization:
        headers["Authorization"] = authorization
    try:
        connection.request("GET", target, headers=headers)
        return Upstream(connection, connection.getresponse())
    except (OSError, http.client.HTTPException) as error:
        connection.close()
        raise BadGateway(f"The camera did not answer ({error.__class__.__name__})") from None


def _basic_auth(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.username is None:
        return None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode("utf-8")
    return "Basic " + base64.b64encode(pair).decode("ascii")


def open_camera(url: str, timeouts: Timeouts, allowed: Iterable[str] = ()) -> Upstream:
    """The camera's answer to a GET of ``url`` (status < 300), redirects to the same origin followed."""
    try:
        origin = origin_of(url)
    except ValueError:
        raise BadGateway("The camera address is not an http(s) URL") from None
    address = resolve(origin, allowed)
    authorization = _basic_auth(url)
    for _ in range(MAX_REDIRECTS + 1):
        response = _request(origin, address, url, authorization, timeouts)
        if response.status not in REDIRECTS:
            return response
        location = response.header("Location") or ""
        response.close()
        url = urljoin(url, location)
        try:
            same = origin_of(url) == origin
        except ValueError:
            same = False
        if not same:
            raise BadGateway("The camera redirected to another host: not followed")
    raise BadGateway(f"The camera redirected more than {MAX_REDIRECTS} times")
