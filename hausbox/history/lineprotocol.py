"""InfluxDB line protocol for the history's points: measurement ``equipment_data`` (digest §8).

One point is one line: ``equipment_data,<tags> <fields> <ms>``. Tags are escaped by the rules the
1.x and 2.x parsers share (a comma, an equals sign and a space take a backslash); the two differ on
backslashes, so a backslash is written as it is wherever it is unambiguous (both read it back as
itself), doubled before a comma, equals sign or space, and dropped at the end of a tag value (1.x
refuses a tag that ends with one, and a refused line would be lost).
"""

from __future__ import annotations

import math

MEASUREMENT = "equipment_data"
# (tag key, index in ExportPoint), sorted by key: the order InfluxDB stores them in, so it need not sort.
TAGS = (("alias", 1), ("category", 2), ("equipmentId", 0), ("type", 4), ("zoneId", 3))

ExportPoint = tuple[str, str, str | None, str | None, str | None, int, float | bool | str]
# equipmentId, alias, category, zoneId, equipment type, timestamp in ms, value (number, bool or text)

_SPECIAL = ",= "
_UNWRITABLE = str.maketrans({"\n": " ", "\r": " ", "\t": " "})  # no escape exists for these in a tag


def escape_tag(text: str) -> str:
    """A tag key or value (also a field key) as line protocol writes it."""
    text = text.translate(_UNWRITABLE).rstrip("\\")
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch == "\\" and text[i + 1] in _SPECIAL:
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def quote_field(text: str) -> str:
    """A string field value: double quotes around it, and its quotes and backslashes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fields_of(value: float | bool | str) -> str | None:
    """``value_number`` and/or ``value_string`` for a value; None for one InfluxDB cannot store (NaN, inf)."""
    if isinstance(value, bool):
        return 'value_number=1.0,value_string="true"' if value else 'value_number=0.0,value_string="false"'
    if isinstance(value, (int, float)):
        number = float(value)
        return f"value_number={number!r}" if math.isfinite(number) else None
    return f"value_string={quote_field(str(value))}"


def encode(point: ExportPoint) -> str | None:
    """The line for one point, or None when it cannot be written (an unstorable number)."""
    fields = fields_of(point[6])
    if fields is None:
        return None
    tags = ""
    for key, index in TAGS:
        text = escape_tag(point[index] or "")
        if text:  # an empty tag value is not allowed: the tag is left out
            tags += f",{key}={text}"
    return f"{MEASUREMENT}{tags} {fields} {int(point[5])}"
