"""The built-in simulator integration: a virtual home whose devices behave.

Off until ``integration.simulator.enabled`` is true. Settings: ``rooms`` (default 4),
``message_rate`` (sensor and meter messages per second across the home, default 2) and ``seed``
(the same seed builds the same home). Written against the plugin API only
(:mod:`hausbox.integrations.api`), exactly as a third-party integration would be.
"""

from __future__ import annotations

import json
from importlib import resources

from hausbox.integrations.builtin.simulator.home import VirtualHome
from hausbox.integrations.builtin.simulator.plugin import SimulatorIntegration
from hausbox.sdk import IntegrationContext

__all__ = ["create", "SimulatorIntegration", "VirtualHome"]


def create(context: IntegrationContext) -> SimulatorIntegration:
    manifest = json.loads(resources.files(__name__).joinpath("manifest.json").read_text(encoding="utf-8"))
    return SimulatorIntegration(context, manifest)
