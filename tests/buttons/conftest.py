from __future__ import annotations

from typing import Iterator

import pytest

from tests.modes.rig import Rig


@pytest.fixture
def make_rig(tmp_path) -> Iterator:
    """In-process engines on a ManualClock in Europe/Paris (``start``: local time), stopped at teardown."""
    made: list[Rig] = []

    def make(start: str = "2026-03-28 12:00") -> Rig:
        rig = Rig(tmp_path / f"data{len(made)}", start)
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.stop()


@pytest.fixture
def rig(make_rig) -> Rig:
    return make_rig()
