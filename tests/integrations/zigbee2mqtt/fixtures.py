"""The shared zigbee2mqtt fixtures (bridge/devices, states, orders) and views over them."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

# The shared fixture set A, beside the checkout (its README says how it was generated).
FIXTURES = Path(os.environ.get("HAUSBOX_Z2M_FIXTURES") or Path(__file__).resolve().parents[3].parent / "shared" / "fixtures")
if not (FIXTURES / "bridge-devices.json").is_file():
    raise RuntimeError(f"zigbee2mqtt fixtures not found at {FIXTURES}: set HAUSBOX_Z2M_FIXTURES")

# Entries of bridge-devices.json that are not devices we drive.
SKIPPED = {"Coordinator", "garage_prise_inconnue", "grenier_repeteur", "0x842e14fffe5b6c7d"}


@lru_cache(maxsize=None)
def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def bridge_devices() -> list[dict[str, Any]]:
    return json.loads(json.dumps(_load("bridge-devices.json")))  # a fresh copy each time


def entry(name: str) -> dict[str, Any]:
    return next(e for e in bridge_devices() if e["friendly_name"] == name)


def states() -> dict[str, Any]:
    return _load("states.json")


def orders() -> dict[str, Any]:
    return _load("orders.json")


def kept_names() -> list[str]:
    return [e["friendly_name"] for e in bridge_devices() if e["friendly_name"] not in SKIPPED]


def published(payload_entry: dict[str, Any]) -> dict[str, Any]:
    """The message zigbee2mqtt really publishes: the expose keys plus the extra ones."""
    return {**payload_entry["payload"], **payload_entry.get("extra_keys", {})}
