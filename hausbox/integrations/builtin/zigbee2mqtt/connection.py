"""The integration's MQTT connection: a paho-mqtt 2.x client driven by two greenlets of its own.

The reader connects, runs the client's network loop and, when the connection fails or drops,
waits (1 s, doubling up to 30 s; back to 1 s after a session that got connected) and connects
again, for as long as the connection is not stopped. Subscriptions are made on every connect
(clean sessions). Every change of state is told to ``on_status(status, detail)``.

Messages read are handed to the dispatcher greenlet, which runs ``on_message`` for each in order.
The reader thus never runs what a message causes: whatever waits there (an order waiting for its
broker acknowledgement, which only the reader can read) cannot stall the network loop it waits on.
When the dispatcher falls ``INBOX_MAX`` messages behind, the reader stops reading and TCP pushes
back on the broker.

The reader drives paho through its external-loop calls (``loop_read``, ``loop_write``,
``loop_misc``) rather than ``loop()``: ``loop()`` runs a ``select()`` for every packet, and paho
reads a packet a few bytes per system call (its type, each byte of its length, then the rest). Here
the socket is read 64 KB at a time and every packet already read is handled before the reader waits
again: at 3000 messages/s that was a third of the service's CPU.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

import gevent
import paho.mqtt.client as mqtt
from gevent.event import Event
from gevent.socket import wait_read, wait_readwrite, wait_write

MIN_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
KEEPALIVE_S = 30
CONNECT_TIMEOUT_S = 5.0  # TCP (and TLS) connect
CONNACK_TIMEOUT_S = 10.0  # from the CONNECT sent to the broker's answer
LOOP_TIMEOUT_S = 1.0
PUBLISH_TIMEOUT_S = 5.0  # waiting for the broker's PUBACK of an order
INBOX_MAX = 5000  # messages read and not yet dispatched before the reader pauses
READ_BATCH = 100  # messages the reader reads before it lets the dispatcher run
RECV_SIZE = 65536  # bytes read from the socket at a time
DISPATCH_SLICE_S = 0.005  # a long inbox yields the core this often

_SCHEMES = {"mqtt": (False, 1883), "tcp": (False, 1883), "mqtts": (True, 8883), "ssl": (True, 8883), "tls": (True, 8883)}


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool = False
    username: str | None = None  # from the URL's user info, when it has one
    password: str | None = None

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """``mqtt://host[:port]`` (1883) or ``mqtts://host[:port]`` (8883, TLS); a bare ``host[:port]`` is mqtt."""
    text = (url or "").strip()
    if not text:
        raise ValueError("mqtt_url is empty")
    if "://" not in text:
        text = "mqtt://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        raise ValueError(f"unsupported broker URL scheme {parts.scheme!r}: use mqtt:// or mqtts://")
    tls, default_port = _SCHEMES[scheme]
    try:
        port = parts.port or default_port
    except ValueError:
        raise ValueError(f"invalid port in broker URL {url!r}") from None
    if not parts.hostname:
        raise ValueError(f"no host in broker URL {url!r}")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return BrokerAddress(parts.hostname, port, tls, username, password)


def describe_error(error: BaseException) -> str:
    """A short, human reason for a failed connection attempt."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return "host not found"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(error, ssl.SSLError):
        return f"TLS error ({getattr(error, 'reason', None) or error})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]
    return str(error) or error.__class__.__name__


class BufferedClient(mqtt.Client):
    """paho's client with a read buffer: paho asks the socket for a packet a few bytes at a time,
    so each message cost three or four system calls; here one ``recv`` serves many packets."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._read_buffer = b""
        self._read_at = 0

    @property
    def buffered(self) -> bool:
        """Bytes were read from the socket that paho has not taken yet."""
        return self._read_at < len(self._read_buffer)

    def drop_buffer(self) -> None:
        """Forget what a previous connection left unread."""
        self._read_buffer, self._read_at = b"", 0

    def _sock_recv(self, bufsize: int) -> bytes:  # paho's one read of the socket (a private hook, paho 2.x)
        buffer, at = self._read_buffer, self._read_at
        if at >= len(buffer):
            data = super()._sock_recv(RECV_SIZE)  # BlockingIOError when nothing came; b"" at EOF
            if len(data) <= bufsize:
                return data
            buffer, at = data, 0
            self._read_buffer = data
        chunk = buffer[at : at + bufsize]
        self._read_at = at + len(chunk)
        return chunk


class MqttConnection:
    def __init__(
        self,
        address: BrokerAddress,
        client_id: str,
        subscriptions: list[str],
        on_message: Callable[[str, bytes], None],
        on_status: Callable[[str, str | None], None],
        logger: logging.Logger,
        username: str | None = None,
        password: str | None = None,
    ):
        self.address = address
        self._subscriptions = subscriptions
        self._handle_message = on_message
        self._report = on_status
        self._log = logger
        self._stopping = Event()
        self._greenlet: gevent.Greenlet | None = None
        self._connected = False  # accepted by the broker and subscribed
        self._refused: str | None = None  # why the broker refused us (CONNECT or SUBSCRIBE), as told
        self._pending_subscriptions: set[int] = set()
        self._inbox: deque[tuple[str, bytes]] = deque()
        self._inbox_ready = Event()  # the dispatcher has work
        self._inbox_room = Event()  # the reader may read
        self._inbox_room.set()
        self._dispatcher: gevent.Greenlet | None = None
        client = BufferedClient(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True)
        if username:
            client.username_pw_set(username, password or None)
        if address.tls:
            client.tls_set()
        client.connect_timeout = CONNECT_TIMEOUT_S
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        self._client = client

    @property
    def connected(self) -> bool:
        return self._connected

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._dispatcher = gevent.spawn(self._dispatch)
        self._greenlet = gevent.spawn(self._run)

    def stop(self, timeout: float = 3.0) -> None:
        """Disconnect cleanly, dispatch what was read, and end both greenlets (killed if they hang)."""
        self._stopping.set()
        self._inbox_room.set()
        try:
            self._client.disconnect()
        except Exception:  # noqa: BLE001 - already closed, nothing to tell the broker
            pass
        for name in ("_greenlet", "_dispatcher"):
            greenlet = getattr(self, name)
            setattr(self, name, None)
            self._inbox_ready.set()  # the dispatcher ends once the inbox is empty
            if greenlet is not None and greenlet is not gevent.getcurrent():
                greenlet.join(timeout)
                if not greenlet.dead:
                    greenlet.kill(block=True, timeout=1.0)
        self._connected = False

    def _run(self) -> None:
        delay = MIN_BACKOFF_S
        while not self._stopping.is_set():
            try:
                got_connected = self._session()
            except Exception as error:  # noqa: BLE001 - the loop must outlive any surprise
                self._log.exception("MQTT loop failed")
                got_connected = False
                self._set_down("error", f"MQTT client error with broker {self.address.label}: {describe_error(error)} — retrying")
            if self._stopping.is_set():
                break
            if got_connected:
                delay = MIN_BACKOFF_S
            if self._stopping.wait(delay):
                break
            delay = min(delay * 2, MAX_BACKOFF_S)
        self._connected = False

    def _session(self) -> bool:
        """One connection: connect, loop until it ends; True when the broker accepted us."""
        label = self.address.label
        self._refused = None
        self._client.drop_buffer()
        try:
            self._client.connect(self.address.host, self.address.port, KEEPALIVE_S)
        except OSError as error:
            self._set_down("error", f"cannot reach broker {label}: {describe_error(error)} — retrying")
            return False
        deadline = time.monotonic() + CONNACK_TIMEOUT_S
        got_connected = False
        rc = mqtt.MQTT_ERR_SUCCESS
        inbox = self._inbox
        while rc == mqtt.MQTT_ERR_SUCCESS and not self._stopping.is_set() and self._refused is None:
            if len(inbox) >= READ_BATCH:
                gevent.sleep(0)  # the dispatcher's turn (select() does not yield while data waits)
                if not self._inbox_room.is_set():
                    self._inbox_room.wait(LOOP_TIMEOUT_S)
            rc = self._network_round()
            got_connected = got_connected or self._connected
            if not got_connected and self._refused is None and time.monotonic() > deadline:
                self._set_down("error", f"no answer from broker {label} — retrying")
                return False
        if self._stopping.is_set():
            return got_connected
        if self._refused is not None:
            self._set_down("error", self._refused)
        elif got_connected:
            self._set_down("disconnected", f"connection to broker {label} lost — reconnecting")
        else:
            self._set_down("error", f"broker {label} closed the connection ({mqtt.error_string(rc)}) — retrying")
        return got_connected

    def _network_round(self) -> mqtt.MQTTErrorCode:
        """What paho's ``loop()`` does, without its ``select()`` per packet: wait until the broker
        sends (or the socket takes what waits to be written) unless bytes are already read, handle
        up to ``READ_BATCH`` packets, write, and keep the connection alive."""
        client = self._client
        sock = client.socket()
        if sock is None:
            return mqtt.MQTT_ERR_NO_CONN
        if not client.buffered and not (hasattr(sock, "pending") and sock.pending()):  # TLS keeps decrypted bytes
            wait = wait_readwrite if client.want_write() else wait_read
            wait(sock.fileno(), LOOP_TIMEOUT_S, False)  # False: a timeout just returns
        for _ in range(READ_BATCH):
            rc = client.loop_read()
            if rc != mqtt.MQTT_ERR_SUCCESS or not client.buffered:
                break
        else:
            gevent.sleep(0)  # more is read already: the dispatcher's turn before the next batch
        if rc == mqtt.MQTT_ERR_SUCCESS and client.want_write():
            rc = client.loop_write()
        return rc if rc != mqtt.MQTT_ERR_SUCCESS else client.loop_misc()

    def _set_down(self, status: str, detail: str) -> None:
        self._connected = False
        self._report(status, detail)

    # ---- paho callbacks (run in the loop greenlet) ---------------------------------------------
    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _properties: Any) -> None:
        if getattr(reason, "is_failure", False):
            self._refused = f"broker {self.address.label} refused the connection: {reason} — retrying"
            return
        # paho leaves Nagle on: small publishes sent while one is unacknowledged would then wait
        # for the broker's delayed ACK (~40 ms an order under concurrent requests).
        sock = client.socket()
        if sock is not None and hasattr(sock, "setsockopt"):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        # Connected once the broker confirmed every subscription: from then on nothing is missed.
        self._pending_subscriptions = set()
        for topic in self._subscriptions:
            result, mid = client.subscribe(topic, qos=1)
            if result == mqtt.MQTT_ERR_SUCCESS and mid is not None:
                self._pending_subscriptions.add(mid)
        if not self._pending_subscriptions:
            self._mark_connected()

    def _on_subscribe(self, _client: mqtt.Client, _userdata: Any, mid: int, reasons: list[Any], _properties: Any) -> None:
        if mid not in self._pending_subscriptions:
            return
        self._pending_subscriptions.discard(mid)
        refused = [str(reason) for reason in reasons if getattr(reason, "is_failure", False)]
        if refused:
            self._refused = f"broker {self.address.label} refused the subscription to {', '.join(self._subscriptions)}: {refused[0]} — retrying"
            return
        if not self._pending_subscriptions:
            self._mark_connected()

    def _mark_connected(self) -> None:
        self._connected = True
        self._report("connected", None)

    def _on_message(self, _client: mqtt.Client, _userdata: Any, message: mqtt.MQTTMessage) -> None:
        self._inbox.append((message.topic, message.payload))
        if len(self._inbox) >= INBOX_MAX:
            self._inbox_room.clear()
        self._inbox_ready.set()

    # ---- the dispatcher greenlet: the message path -----------------------------------------------
    def _dispatch(self) -> None:
        inbox, handle = self._inbox, self._handle_message
        while not (self._stopping.is_set() and not inbox):
            self._inbox_ready.wait()
            self._inbox_ready.clear()
            slice_end = time.perf_counter() + DISPATCH_SLICE_S
            while inbox:
                topic, payload = inbox.popleft()
                try:
                    handle(topic, payload)
                except Exception:  # noqa: BLE001 - one bad message must not stop the others
                    self._log.exception("could not handle a message on %s", topic)
                if time.perf_counter() > slice_end:
                    self._inbox_room.set()
                    gevent.sleep(0)  # a long inbox shares the core with requests and workers
                    slice_end = time.perf_counter() + DISPATCH_SLICE_S
            self._inbox_room.set()

    # ---- sending -----------------------------------------------------------------------------
    def publish(self, topic: str, payload: str, qos: int = 1, timeout: float = PUBLISH_TIMEOUT_S) -> None:
        """Publish and wait for the broker's acknowledgement; raise when that does not happen."""
        if not self._connected:
            raise ConnectionError(f"not connected to broker {self.address.label}")
        deadline = time.monotonic() + timeout
        info = self._client.publish(topic, payload, qos=qos)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            raise ConnectionError(f"publish to {topic} failed: {mqtt.error_string(info.rc)}")
        self._write_rest(deadline)
        if qos > 0:
            info.wait_for_publish(timeout)
            if not info.is_published():
                raise TimeoutError(f"broker {self.address.label} did not acknowledge the message within {timeout:g} s")

    def _write_rest(self, deadline: float) -> None:
        """paho writes a publish at once, as much as the socket takes. What a full socket left is
        written here as it drains: the reader waits for the broker's bytes, not for room to write."""
        client = self._client
        while client.want_write():
            sock = client.socket()
            left = deadline - time.monotonic()
            if sock is None or left <= 0:
                return
            wait_write(sock.fileno(), left, False)
            if client.loop_write() != mqtt.MQTT_ERR_SUCCESS:
                return
