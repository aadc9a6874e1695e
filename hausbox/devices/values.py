"""Values are stored at the type the integration declared at discovery."""

from __future__ import annotations

from typing import Any

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def coerce(data_type: str, value: Any) -> Any:
    """``value`` converted to ``data_type`` when it safely converts; otherwise unchanged."""
    if value is None:
        return None
    if data_type == "number":
        if isinstance(value, bool) or isinstance(value, (int, float)):
            return value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return value
            return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
        return value
    if data_type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in _TRUE:
                return True
            if lowered in _FALSE:
                return False
        return value
    if data_type in ("text", "enum"):
        if isinstance(value, str) or isinstance(value, (dict, list)):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return str(value)
        return value
    return value
