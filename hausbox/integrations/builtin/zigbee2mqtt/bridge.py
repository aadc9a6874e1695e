"""``bridge/devices`` entries turned into discovered devices.

zigbee2mqtt publishes (retained) the whole device list on ``<base>/bridge/devices``. Entries that
are not devices we drive are skipped: the Coordinator, a device without a definition (still
being interviewed, or unknown to the converters with nothing generated) and a device the user
disabled. A device zigbee2mqtt does not support natively but drives through a definition it
generated from the device's clusters (``supported: false``, ``definition.source: generated``) is
a device like any other: zigbee2mqtt accepts its orders. ``present_names`` says which devices still exist, for the stale removal.
"""

from __future__ import annotations

from typing import Any

from hausbox.integrations.builtin.zigbee2mqtt.exposes import parse_exposes
from hausbox.sdk import DiscoveredDevice

SOURCE = "zigbee2mqtt"

# zigbee2mqtt's power_source strings (from the Zigbee basic cluster) and ours.
_POWER_SOURCES = {
    "mains (single phase)": "mains",
    "mains (3 phase)": "mains",
    "emergency mains constantly powered": "mains",
    "emergency mains and transfer switch": "mains",
    "battery": "battery",
    "dc source": "dc",
}


def friendly_name(entry: Any) -> str | None:
    name = entry.get("friendly_name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) and name else None


def is_coordinator(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("type") == "Coordinator"


def skip_reason(entry: Any) -> str | None:
    """Why an entry is not turned into a device, or None when it is one."""
    if friendly_name(entry) is None:
        return "no friendly_name"
    if is_coordinator(entry):
        return "coordinator"
    if entry.get("disabled") is True:
        return "disabled"
    definition = entry.get("definition")
    if not isinstance(definition, dict) or not definition.get("exposes"):
        return "not supported (yet)" if entry.get("supported") is False else "no definition"
    return None


def present_names(entries: list[Any]) -> set[str]:
    """Friendly names of every device the bridge still knows (skipped ones included: a device
    disabled for a while keeps its bindings); the Coordinator is never a device."""
    return {name for entry in entries if (name := friendly_name(entry)) and not is_coordinator(entry)}


def power_source(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    text = raw.strip().lower()
    if text in _POWER_SOURCES:
        return _POWER_SOURCES[text]
    if text.startswith("mains"):
        return "mains"
    if text == "unknown":
        return None
    return text


def _clean(text: Any) -> str | None:
    """A device-reported string without padding (Legrand pads model_id with spaces and NULs)."""
    if not isinstance(text, str):
        return None
    cleaned = text.replace("\x00", "").strip()
    return cleaned or None


def discovered_device(entry: Any) -> DiscoveredDevice | None:
    """The device an entry describes, or None when it is skipped (see ``skip_reason``)."""
    if skip_reason(entry) is not None:
        return None
    definition = entry["definition"]
    exposes = definition.get("exposes")
    exposes = exposes if isinstance(exposes, list) else []
    data, orders = parse_exposes(exposes)
    return DiscoveredDevice(
        source_device_id=entry["friendly_name"],
        manufacturer=_clean(definition.get("vendor")) or _clean(entry.get("manufacturer")),
        model=_clean(definition.get("model")) or _clean(entry.get("model_id")),
        ieee_address=_clean(entry.get("ieee_address")),
        power_source=power_source(entry.get("power_source")),
        data=data,
        orders=orders,
        raw_expose=exposes,
    )
