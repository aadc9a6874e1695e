"""The attempt limiter's memory stays bounded: idle entries expire, and cycling keys cannot grow it."""

import pytest

from hausbox.auth.rate_limit import AttemptLimiter, SlidingWindow
from hausbox.core.errors import TooManyRequests


def test_entries_idle_for_a_window_are_forgotten():
    window = SlidingWindow(limit=3, window_s=60)
    for n in range(100):
        window.add(f"10.0.0.{n}", now=n * 0.1)
    assert len(window) == 100
    window.add("10.0.1.1", now=70.0)  # every earlier key has been idle for more than 60 s
    assert len(window) == 1


def test_cycling_keys_within_a_window_is_bounded_and_forgets_the_least_recent():
    window = SlidingWindow(limit=3, window_s=60, max_keys=50)
    for n in range(1000):
        window.add(f"user-{n}", now=1.0)
        assert len(window) <= 50
    assert window.wait_s("user-999", now=1.0) == 0.0
    for _ in range(2):
        window.add("user-999", now=1.0)
    assert window.wait_s("user-999", now=1.0) == 60.0


def test_an_attempt_refused_counts_nowhere_and_says_when_to_retry():
    limiter = AttemptLimiter(limit=2, window_s=60)
    limiter.count(address="10.0.0.1", account="Admin")
    limiter.count(address="10.0.0.2", account=" admin ")
    with pytest.raises(TooManyRequests) as refused:
        limiter.count(address="10.0.0.3", account="ADMIN")
    assert 1 <= refused.value.retry_after_s <= 60
    assert refused.value.headers() == {"Retry-After": str(refused.value.retry_after_s)}
    limiter.count(address="10.0.0.3", account="bob")  # the refused attempt did not count for 10.0.0.3
    limiter.count(address="10.0.0.3")
    with pytest.raises(TooManyRequests):
        limiter.count(address="10.0.0.3")
