from __future__ import annotations

from typing import Iterator

import pytest

from tests.recipes.lab import Lab


@pytest.fixture
def make_lab(tmp_path) -> Iterator:
    """In-process engines on a ManualClock in Europe/Paris (``start``: local time), stopped at teardown.

    ``make_lab(start, data_dir=...)`` on the data directory of an earlier lab is a restart.
    """
    made: list[Lab] = []

    def make(start: str = "2026-06-15 08:00", data_dir=None, clock=None) -> Lab:
        lab = Lab(data_dir or tmp_path / f"data{len(made)}", start, clock)
        made.append(lab)
        return lab

    yield make
    for lab in made:
        lab.stop()


@pytest.fixture
def lab(make_lab) -> Lab:
    """A lab at Monday 2026-06-15 08:00 in Paris, with a "Living" zone."""
    return make_lab()
