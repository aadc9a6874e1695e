from __future__ import annotations

import pytest


@pytest.fixture
def house(make_house):
    """The equipment tests' home, on the real clock: devices answer orders only when a test says so
    (no echo), a delivery is confirmed within 0.3 s (30 s in production), the integrations are
    started as at boot, and equipments go in a "Home" zone."""
    return make_house(echo=False, order_confirm_s=0.3, start_integrations=True, zone="Home")
