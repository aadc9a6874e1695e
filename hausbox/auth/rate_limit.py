"""A sliding-window request limiter keyed by client address."""

from __future__ import annotations

import time
from collections import deque

from hausbox.core.errors import TooManyRequests


class RateLimiter:
    def __init__(self, limit: int, window_s: float):
        self.limit = limit
        self.window_s = window_s
        self._hits: dict[str, deque[float]] = {}

    def hit(self, key: str) -> None:
        """Count one request for ``key``; raise TooManyRequests past the limit."""
        now = time.monotonic()
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) >= self.limit:
            retry = max(1, int(hits[0] + self.window_s - now + 0.999))
            raise TooManyRequests(f"Too many login attempts: retry in {retry} s", retryAfterSeconds=retry)
        hits.append(now)
        if len(self._hits) > 10_000:  # forget idle clients so a scan cannot grow memory
            self._hits = {k: v for k, v in self._hits.items() if v and v[-1] > now - self.window_s}
