from __future__ import annotations

import pytest


@pytest.fixture
def house(make_house):
    """Saturday 2026-03-28 12:00 in Paris on a ManualClock, the calendar running (the engine itself
    is not started)."""
    return make_house(start="2026-03-28 12:00", services=["calendar"])
