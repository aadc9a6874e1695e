"""zigbee2mqtt exposes flattened into the data (readable) and orders (settable) of one device.

An expose tree nests: ``light``, ``switch``, ``cover``, ``lock``, ``climate`` (and any other group
without a ``property``) carry ``features`` whose properties are top-level keys of the device's
state. A ``composite`` or ``list`` with a ``property`` is one value, an object (or array) under
that property: it becomes one ``json`` datum and/or order, never one per feature, because the
state message carries it whole (``color`` is ``{"x": .., "y": ..}``).

``access`` is a bit mask: 1 the property is published (a datum), 2 it can be set (an order),
4 it can be read on request. It defaults to 1; a composite without one takes its features' bits.

What an order accepts beyond its type (a number's presets, an object's fields, a text's format):
``values.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from hausbox.integrations.builtin.zigbee2mqtt.values import number, presets, value_schema
from hausbox.sdk import KEY_CATEGORIES, DataSpec, OrderSpec

ACCESS_PUBLISHED = 1
ACCESS_SET = 2

# Value types of zigbee2mqtt exposes and the type a datum or order of that expose is declared with.
_TYPES = {"binary": "boolean", "numeric": "number", "enum": "enum", "text": "text", "composite": "json", "list": "json"}
_OBJECT_TYPES = frozenset({"composite", "list"})

# Data categories by property. The engine's table of well-known keys, plus the keys that only
# zigbee2mqtt converters produce.
DATA_CATEGORIES: dict[str, str] = {
    **KEY_CATEGORIES,
    **dict.fromkeys(("BMP180_T", "SCD30_T"), "temperature"),
    "SCD30_HR": "humidity",
    "BMP180_P": "pressure",
    "SCD30_CO2": "co2",
    **dict.fromkeys(("occupied_heating_setpoint", "current_heating_setpoint"), "setpoint"),
    "power_on_behavior": "generic",
}

# Order categories by property (``state`` depends on its context, see ``_order_category``).
ORDER_CATEGORIES: dict[str, str] = {
    "brightness": "set_brightness",
    "position": "set_shutter_position",
    "color_temp": "set_color_temp",
    "color": "set_color",
    **dict.fromkeys(("occupied_heating_setpoint", "current_heating_setpoint"), "set_setpoint"),
}

# Properties whose presence makes a device a light (its plain ``state`` is then a light's state).
_LIGHT_PROPERTIES = frozenset({"brightness", "color_temp", "color", "color_xy", "color_hs"})


@dataclass
class Leaf:
    """One property of the device: the expose that declares it and the group it sits in."""

    expose: dict[str, Any]
    parent: str | None  # light, switch, cover, lock, climate ... or None at the top level
    access: int

    @property
    def key(self) -> str:
        return self.expose["property"]

    @property
    def name(self) -> str:
        """The property without its endpoint suffix: ``state`` for ``state_l1``."""
        if self.expose.get("endpoint") and isinstance(self.expose.get("name"), str):
            return self.expose["name"]
        return self.key

    def declared_again(self, expose: dict[str, Any]) -> None:
        """The same property declared again: its access bits count, and so do its features."""
        self.access |= _access(expose)
        mine, theirs = self.expose.get("features"), expose.get("features")
        if isinstance(mine, list) and isinstance(theirs, list):
            self.expose = {**self.expose, "features": mine + theirs}


def _access(expose: dict[str, Any]) -> int:
    access = expose.get("access")
    if isinstance(access, int) and not isinstance(access, bool):
        return access
    features = expose.get("features")
    if isinstance(features, list) and features:
        bits = 0
        for feature in features:
            if isinstance(feature, dict):
                bits |= _access(feature)
        return bits or ACCESS_PUBLISHED
    return ACCESS_PUBLISHED


def leaves(exposes: Any) -> list[Leaf]:
    """Every property of the tree, in order; a property declared twice is kept once (its first
    declaration), with the access bits and features of both (Hue bulbs declare ``color`` as xy
    and as hs: the order takes either)."""
    found: dict[str, Leaf] = {}

    def walk(items: Iterable[Any], parent: str | None) -> None:
        for expose in items:
            if not isinstance(expose, dict):
                continue
            prop, kind, features = expose.get("property"), expose.get("type"), expose.get("features")
            if isinstance(prop, str) and prop and (kind in _OBJECT_TYPES or not isinstance(features, list)):
                if prop in found:
                    found[prop].declared_again(expose)
                else:
                    found[prop] = Leaf(expose, parent, _access(expose))
            elif isinstance(features, list):
                group = kind if isinstance(kind, str) and kind not in _OBJECT_TYPES else parent
                walk(features, group)

    walk(exposes if isinstance(exposes, list) else [], None)
    return list(found.values())


def all_properties(exposes: Any) -> set[str]:
    """Every ``property`` anywhere in the tree, including the features of composites."""
    found: set[str] = set()

    def walk(items: Any) -> None:
        for expose in items if isinstance(items, list) else []:
            if isinstance(expose, dict):
                if isinstance(expose.get("property"), str):
                    found.add(expose["property"])
                walk(expose.get("features"))

    walk(exposes)
    return found


def _is_boolean(value: Any) -> bool:
    return value is None or isinstance(value, bool)


def value_type(expose: dict[str, Any]) -> str:
    """binary -> boolean (enum when value_on / value_off are not booleans), numeric -> number,
    enum -> enum, text -> text, composite / list -> json, anything else -> text."""
    kind = expose.get("type")
    if kind == "binary" and not (_is_boolean(expose.get("value_on")) and _is_boolean(expose.get("value_off"))):
        return "enum"
    return _TYPES.get(kind, "text")


def _enum_values(expose: dict[str, Any], for_order: bool) -> list[Any] | None:
    kind = expose.get("type")
    if kind == "numeric":
        return (presets(expose) or None) if for_order else None
    if kind == "enum":
        values = expose.get("values")
        return list(values) if isinstance(values, list) and values else None
    if kind == "binary" and value_type(expose) == "enum":
        names = ("value_on", "value_off", "value_toggle") if for_order else ("value_on", "value_off")
        values = [expose[name] for name in names if expose.get(name) is not None]
        return values or None
    return None


def _is_cover_move(expose: dict[str, Any]) -> bool:
    values = expose.get("values")
    upper = {v.upper() for v in values if isinstance(v, str)} if isinstance(values, list) else set()
    return {"OPEN", "CLOSE"} <= upper


def _data_category(leaf: Leaf, light_device: bool) -> str:
    if leaf.name == "state":
        return "light_state" if leaf.parent in ("light", "switch") or (leaf.parent is None and light_device) else "generic"
    return DATA_CATEGORIES.get(leaf.key) or DATA_CATEGORIES.get(leaf.name) or "generic"


def _order_category(leaf: Leaf, light_device: bool) -> str | None:
    if leaf.name == "state":
        if leaf.parent == "light" or (leaf.parent is None and light_device):
            return "light_toggle"
        if leaf.parent == "switch":
            return "toggle_power"
        if leaf.parent == "cover" or _is_cover_move(leaf.expose):
            return "shutter_move"
        return None
    return ORDER_CATEGORIES.get(leaf.key) or ORDER_CATEGORIES.get(leaf.name)


def parse_exposes(exposes: Any) -> tuple[list[DataSpec], list[OrderSpec]]:
    """The data (access bit 1) and orders (access bit 2) a device's exposes declare."""
    light_device = bool(all_properties(exposes) & _LIGHT_PROPERTIES)
    data: list[DataSpec] = []
    orders: list[OrderSpec] = []
    for leaf in leaves(exposes):
        expose = leaf.expose
        kind = value_type(expose)
        unit = expose.get("unit") if isinstance(expose.get("unit"), str) else None
        if leaf.access & ACCESS_PUBLISHED:
            data.append(DataSpec(leaf.key, kind, _data_category(leaf, light_device), unit, _enum_values(expose, for_order=False)))  # type: ignore[arg-type]
        if leaf.access & ACCESS_SET:
            numeric = expose.get("type") == "numeric"
            orders.append(
                OrderSpec(
                    key=leaf.key,
                    type=kind,  # type: ignore[arg-type]
                    category=_order_category(leaf, light_device),
                    min=number(expose.get("value_min")) if numeric else None,
                    max=number(expose.get("value_max")) if numeric else None,
                    enum_values=_enum_values(expose, for_order=True),
                    unit=unit,
                    value_schema=value_schema(expose),
                )
            )
    return data, orders
