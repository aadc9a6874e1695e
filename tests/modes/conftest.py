from __future__ import annotations

import pytest

from tests.inprocess import StubRecipes


@pytest.fixture
def house(make_house):
    """Saturday 2026-03-28 12:00 in Paris on a ManualClock; a stand-in recipe service that knows the
    instances inst-1 and inst-2 and records what modes ask of it (``house.recipes``)."""
    return make_house(start="2026-03-28 12:00", recipes=StubRecipes("inst-1", "inst-2"))
