"""What an order of a zigbee2mqtt expose accepts, beyond its type, range and enum values.

A ``numeric`` expose may name values (``presets``): ``color_temp`` takes ``"warm"`` as well as a
number of mireds, and zigbee2mqtt accepts the name itself. An order lists the preset names as its
enum values (then any preset value a number in range would not cover, such as
``color_temp_startup``'s ``previous``, 65535): they are sent as they are, unchanged.

An object (``composite``), a ``list`` or a text in a stated format needs more than a type: its
order carries a JSON Schema (``value_schema``) the engine checks a value against before sending.
A composite takes its settable features (at least one, and nothing else), each as its own expose
says; a list its items; a text whose description states a format (exposes carry no pattern, e.g.
``'HH:MM'``) only that format, and the other forms the description names.
"""

from __future__ import annotations

import re
from typing import Any

Schema = dict[str, Any]
ACCESS_SET = 2

# Formats a text expose states in its description only: the marker, then the form it stands for.
_TEXT_FORMATS = (
    (re.compile(r"'HH:MM'"), r"(?:[01]?[0-9]|2[0-3]):[0-5][0-9]"),
    (re.compile(r"\bhex\b.{0,20}#[0-9A-Fa-f]{6}"), r"#[0-9A-Fa-f]{6}"),
)
# Other forms such a description names: a JSON object, words to send ("Send 'undefined' to disable").
_OTHER_FORMS = ((re.compile(r"\bJSON \{"), r"\{.*\}"),)
_WORDS_TO_SEND = re.compile(r"\bSend '([^']+)'")


def number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _in_range(expose: dict[str, Any], value: Any) -> bool:
    low, high = number(expose.get("value_min")), number(expose.get("value_max"))
    return number(value) is not None and (low is None or value >= low) and (high is None or value <= high)


def presets(expose: dict[str, Any]) -> list[Any]:
    """A numeric expose's named values: every preset's name, then the preset values that are
    neither a name nor a number in range (``previous`` = 65535, above ``color_temp_startup``'s max)."""
    listed = expose.get("presets")
    entries = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
    names = [p["name"] for p in entries if isinstance(p.get("name"), str) and p["name"]]
    values = [p["value"] for p in entries if isinstance(p.get("value"), str) or number(p.get("value")) is not None]
    beyond = [value for value in values if value not in names and not _in_range(expose, value)]
    return list(dict.fromkeys(names + beyond))


def text_pattern(description: Any) -> str | None:
    """The pattern of a text whose description states its format, else None."""
    if not isinstance(description, str):
        return None
    forms = [form for marker, form in _TEXT_FORMATS if marker.search(description)]
    if not forms:
        return None
    forms += [form for marker, form in _OTHER_FORMS if marker.search(description)]
    forms += [re.escape(word) for word in _WORDS_TO_SEND.findall(description)]
    return "^(?:" + "|".join(forms) + ")$"


def value_schema(expose: dict[str, Any]) -> Schema | None:
    """The JSON Schema of an order's value when its type says too little (object, list, formatted text)."""
    kind = expose.get("type")
    if kind in ("composite", "list") or (kind == "text" and text_pattern(expose.get("description"))):
        return _schema(expose)
    return None


def _schema(expose: dict[str, Any]) -> Schema:
    kind = expose.get("type")
    if kind == "numeric":
        return _numeric(expose)
    if kind == "binary":
        values = [expose[name] for name in ("value_on", "value_off", "value_toggle") if expose.get(name) is not None]
        return {"enum": values} if values else {"type": "boolean"}
    if kind == "enum":
        values = expose.get("values")
        return {"enum": list(values)} if isinstance(values, list) and values else {}
    if kind == "text":
        pattern = text_pattern(expose.get("description"))
        return {"type": "string", "pattern": pattern} if pattern else {"type": "string"}
    if kind == "composite":
        return _object(expose)
    if kind == "list":
        return _array(expose)
    return {}


def _numeric(expose: dict[str, Any]) -> Schema:
    schema: Schema = {"type": "number"}
    for keyword, name in (("minimum", "value_min"), ("maximum", "value_max")):
        if number(expose.get(name)) is not None:
            schema[keyword] = expose[name]
    named = presets(expose)
    return {"anyOf": [schema, {"enum": named}]} if named else schema


def _settable(feature: dict[str, Any]) -> bool:
    access = feature.get("access")
    return not isinstance(access, int) or bool(access & ACCESS_SET)


def _object(expose: dict[str, Any]) -> Schema:
    features = expose.get("features")
    fields = [f for f in features if isinstance(f, dict) and isinstance(f.get("property"), str) and _settable(f)] if isinstance(features, list) else []
    if not fields:
        return {"type": "object"}
    properties = {field["property"]: _schema(field) for field in fields}
    return {"type": "object", "properties": properties, "additionalProperties": False, "minProperties": 1}


def _array(expose: dict[str, Any]) -> Schema:
    schema: Schema = {"type": "array"}
    if isinstance(expose.get("item_type"), dict):
        schema["items"] = _schema(expose["item_type"])
    for keyword, name in (("minItems", "length_min"), ("maxItems", "length_max")):
        if isinstance(expose.get(name), int) and not isinstance(expose.get(name), bool):
            schema[keyword] = expose[name]
    return schema
