"""Limits on guessing a secret: sliding windows per source address and per account.

Every route that checks a password or a code counts each request it gets, whatever its body
(``Route(checks_secret=True)``, counted in ``api/app.py`` before the body is read), against the
caller's address and, when known, the account it tries (the signed-in user, or the username a
login names). Past the limit in either window the request is refused with 429 and ``Retry-After``,
and a refused request counts nowhere: an attacker who keeps trying keeps the account held for as
long as they try and at most one window after, never longer.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque

from hausbox.core.errors import TooManyRequests

MAX_KEYS = 10_000  # per window: beyond it the least recently seen keys are forgotten


class SlidingWindow:
    """At most ``limit`` hits per key in the last ``window_s`` seconds; memory bounded by ``max_keys``."""

    def __init__(self, limit: int, window_s: float, max_keys: int = MAX_KEYS):
        self.limit = max(1, limit)
        self.window_s = window_s
        self.max_keys = max_keys
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()  # from the least recently hit key

    def wait_s(self, key: str, now: float) -> float:
        """Seconds until ``key`` may be hit again (0 when it may be now)."""
        hits = self._hits.get(key)
        if hits is None:
            return 0.0
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        return hits[0] + self.window_s - now if len(hits) >= self.limit else 0.0

    def add(self, key: str, now: float) -> None:
        self._hits.setdefault(key, deque()).append(now)
        self._hits.move_to_end(key)
        self._forget(now)

    def _forget(self, now: float) -> None:
        """Drop keys idle for a whole window, then the oldest beyond ``max_keys``."""
        while self._hits:
            oldest = next(iter(self._hits.values()))
            if len(self._hits) <= self.max_keys and oldest[-1] > now - self.window_s:
                return
            self._hits.popitem(last=False)

    def __len__(self) -> int:
        return len(self._hits)


class AttemptLimiter:
    """Attempts at a secret: ``limit`` per window per source address, and as many per account."""

    def __init__(self, limit: int, window_s: float = 60):
        self.by_address = SlidingWindow(limit, window_s)
        self.by_account = SlidingWindow(limit, window_s)

    def count(self, address: str | None = None, account: str | None = None) -> None:
        """Count one attempt; TooManyRequests (nothing counted) when either window is full."""
        now = time.monotonic()
        keyed = [(self.by_address, address), (self.by_account, account_key(account))]
        keyed = [(window, key) for window, key in keyed if key is not None]
        wait = max((window.wait_s(key, now) for window, key in keyed), default=0.0)
        if wait > 0:
            seconds = max(1, int(wait + 0.999))
            raise TooManyRequests(f"Too many attempts: retry in {seconds} s", retry_after_s=seconds)
        for window, key in keyed:
            window.add(key, now)


def account_key(username: str | None) -> str | None:
    """An account as the user directory finds it: case and surrounding spaces do not matter."""
    return None if username is None else username.strip().lower()
