from __future__ import annotations

import pytest


@pytest.fixture
def house(make_house):
    """The recipe tests' home: Monday 2026-06-15 08:00 in Paris on a ManualClock, with a "Living"
    zone (``house.zone_id``); devices echo orders back."""
    return make_house(start="2026-06-15 08:00", zone="Living")
