"""Delivery lanes: one retry queue and one greenlet per destination (a publisher's chat or webhook,
or one browser's push subscription), so a failing or hanging destination never holds another.

A lane sends its messages in order. A message that fails for a reason that may pass (no answer, a
dropped connection, a 5xx, 408 or 429) stays at the head of the lane and is tried again after a
delay that doubles from ``backoff[0]`` up to ``backoff[1]``; one refused for good (another 4xx) is
dropped and counted, as is one older than ``max_age_s`` or one pushed out of a full lane (the
oldest goes). A push subscription its service answers 404 or 410 is gone: the lane reports it and
its messages are dropped. While the outbound gate is closed (shadow mode, an inert instance) the
lane sends nothing: what it holds is dropped and counted as held. What a lane did is its
``status()``, shown in the publisher's JSON.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import gevent
from gevent.event import Event as Flag

from hausbox.core.clock import iso_utc, now_ms
from hausbox.core.workers import OutboundGate

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

log = logging.getLogger("hausbox.notifications")

TIMEOUT_S = 10.0
BACKOFF_S = (1.0, 300.0)
MAX_AGE_S = 3600.0
CAPACITY = 100
RETRYABLE_STATUS = frozenset({408, 425, 429})


class DeliveryError(Exception):
    """A message not delivered: ``permanent`` when trying again cannot help, ``gone`` when the push
    subscription no longer exists. The message never holds a channel secret."""

    def __init__(self, message: str, permanent: bool = False, gone: bool = False):
        super().__init__(message)
        self.message = message
        self.permanent = permanent
        self.gone = gone


def check_answer(response: requests.Response, what: str) -> None:
    """Raise DeliveryError for a non-2xx answer (permanent for a 4xx other than 408/425/429)."""
    status = response.status_code
    if 200 <= status < 300:
        return
    permanent = 400 <= status < 500 and status not in RETRYABLE_STATUS
    raise DeliveryError(f"{what} answered {status}", permanent=permanent)


def post(session: requests.Session, url: str, what: str, **kwargs: Any) -> requests.Response:
    """POST with the lane's timeout; network failures become a retryable DeliveryError naming only
    the kind of failure (the URL may hold a token)."""
    import requests

    try:
        response = session.post(url, timeout=kwargs.pop("timeout", TIMEOUT_S), **kwargs)
    except requests.Timeout:
        raise DeliveryError(f"{what} did not answer within {TIMEOUT_S:g} s") from None
    except requests.RequestException as error:
        raise DeliveryError(f"{what} is unreachable ({type(error).__name__})") from None
    check_answer(response, what)
    return response


@dataclass
class Message:
    text: str
    title: str
    kind: str  # mapping, alarm, test
    extra: dict[str, Any] = field(default_factory=dict)
    queued_at: float = field(default_factory=time.monotonic)


class Lane:
    """One destination's queue and greenlet (see the module docstring)."""

    def __init__(self, key: str, deliver: Callable[[Message, requests.Session], None], gate: OutboundGate,
                 backoff_s: tuple[float, float] = BACKOFF_S, max_age_s: float = MAX_AGE_S, capacity: int = CAPACITY,
                 on_gone: Callable[[], None] | None = None):  # fmt: skip
        self.key = key
        self._deliver = deliver
        self._gate = gate
        self.backoff_s = backoff_s
        self.max_age_s = max_age_s
        self.capacity = capacity
        self._on_gone = on_gone
        self._items: deque[Message] = deque()
        self._wake = Flag()
        self._stopping = Flag()
        self._greenlet: gevent.Greenlet | None = None
        self._session: requests.Session | None = None  # made at the first attempt
        self._delay_s = backoff_s[0]
        self.sent = self.failed = self.dropped = self.held = 0
        self.state = "idle"  # idle (nothing tried yet), ok, retrying, failing (last message refused), gone
        self.last_error: str | None = None
        self.last_error_at: int | None = None
        self.last_sent_at: int | None = None
        self.next_retry_at: int | None = None

    # ---- feeding -------------------------------------------------------------------------------
    def put(self, message: Message) -> None:
        if len(self._items) >= self.capacity:
            self._items.popleft()
            self.dropped += 1
        self._items.append(message)
        self._wake.set()

    @property
    def queued(self) -> int:
        return len(self._items)

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        if self._greenlet is None or self._greenlet.dead:
            self._stopping.clear()
            self._greenlet = gevent.spawn(self._run)

    def stop(self) -> None:
        """End the greenlet (what is queued is lost: notifications are not kept across restarts)."""
        self._stopping.set()
        self._wake.set()
        greenlet, self._greenlet = self._greenlet, None
        if greenlet is not None and greenlet is not gevent.getcurrent():
            greenlet.kill(block=True, timeout=1.0)
        if self._session is not None:
            self._session.close()

    def idle(self) -> bool:
        """Nothing queued (tests wait for this)."""
        return not self._items

    # ---- the loop ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()
            self._wake.clear()
            while self._items and not self._stopping.is_set():
                if not self._gate.is_open:
                    self.held += len(self._items)
                    self._items.clear()
                    break
                message = self._items[0]
                if time.monotonic() - message.queued_at > self.max_age_s:
                    self._items.popleft()
                    self.dropped += 1
                    continue
                delay = self._attempt(message)
                if delay:
                    self.next_retry_at = now_ms() + int(delay * 1000)
                    self._stopping.wait(delay)
                    self.next_retry_at = None

    def _attempt(self, message: Message) -> float:
        """Try the head message once; the delay before the next try (0: go on with the next)."""
        if self._session is None:
            import requests

            self._session = requests.Session()
        try:
            self._deliver(message, self._session)
        except DeliveryError as error:
            self.failed += 1
            self.last_error, self.last_error_at = error.message, now_ms()
            if error.gone:
                self.state = "gone"
                self.dropped += len(self._items)
                self._items.clear()
                log.info("notification lane %s: %s; the subscription is removed", self.key, error.message)
                if self._on_gone is not None:
                    self._on_gone()
                return 0
            if error.permanent:
                self.state = "failing"
                self._items.popleft()
                self.dropped += 1
                log.warning("notification lane %s: %s; message dropped", self.key, error.message)
                return 0
            self.state = "retrying"
            delay, self._delay_s = self._delay_s, min(self.backoff_s[1], self._delay_s * 2)
            log.warning("notification lane %s: %s; trying again in %.1f s", self.key, error.message, delay)
            return delay
        except Exception as error:  # a bug in a channel: the message is dropped, the lane goes on
            self.failed += 1
            self.dropped += 1
            self._items.popleft()
            self.state = "failing"
            self.last_error, self.last_error_at = f"internal error: {type(error).__name__}", now_ms()
            log.exception("notification lane %s: delivery failed", self.key)
            return 0
        self._items.popleft()
        self.sent += 1
        self.state = "ok"
        self.last_sent_at = now_ms()
        self._delay_s = self.backoff_s[0]
        return 0

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "queued": len(self._items),
            "sent": self.sent,
            "failedAttempts": self.failed,
            "dropped": self.dropped,
            "held": self.held,
            "lastError": self.last_error,
            "lastErrorAt": iso_utc(self.last_error_at),
            "lastSentAt": iso_utc(self.last_sent_at),
            "nextRetryAt": iso_utc(self.next_retry_at),
        }


NO_LANE: dict[str, Any] = {
    "state": "idle", "queued": 0, "sent": 0, "failedAttempts": 0, "dropped": 0, "held": 0,
    "lastError": None, "lastErrorAt": None, "lastSentAt": None, "nextRetryAt": None, "destinations": 0,
}  # fmt: skip
STATE_RANK = {"retrying": 4, "failing": 3, "gone": 2, "ok": 1, "idle": 0}


def combined_status(lanes: list[Lane]) -> dict[str, Any]:
    """One publisher's delivery state over its lanes (a web push publisher has one per subscription):
    the worst state, counters summed, the latest error and send."""
    if not lanes:
        return dict(NO_LANE)
    statuses = [lane.status() for lane in lanes]
    worst = max(statuses, key=lambda s: STATE_RANK[s["state"]])
    with_error = [s for s in statuses if s["lastErrorAt"]]
    latest_error = max(with_error, key=lambda s: s["lastErrorAt"]) if with_error else worst
    retries = [s["nextRetryAt"] for s in statuses if s["nextRetryAt"]]
    sent_at = [s["lastSentAt"] for s in statuses if s["lastSentAt"]]
    return {
        "state": worst["state"],
        **{name: sum(s[name] for s in statuses) for name in ("queued", "sent", "failedAttempts", "dropped", "held")},
        "lastError": latest_error["lastError"],
        "lastErrorAt": latest_error["lastErrorAt"],
        "lastSentAt": max(sent_at) if sent_at else None,
        "nextRetryAt": min(retries) if retries else None,
        "destinations": len(lanes),
    }
