"""Checks of a channel's ``channelConfig`` fields (each channel module checks its own config with
these); a bad field is a 400 naming it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from hausbox.core.errors import BadRequest


def required_field(config: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = config.get(name)
    if value is None:
        raise BadRequest(f"channelConfig.{name} is required")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadRequest(f"channelConfig.{name} has the wrong type")
    if isinstance(value, str) and not value.strip():
        raise BadRequest(f"channelConfig.{name} must not be empty")
    return value


def optional_text(config: dict[str, Any], name: str, max_length: int) -> str | None:
    value = config.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadRequest(f"channelConfig.{name} must be a string")
    if len(value) > max_length:
        raise BadRequest(f"channelConfig.{name} must be at most {max_length} characters")
    return value


def http_url(value: str, where: str, schemes: tuple[str, ...] = ("http", "https")) -> str:
    """``value`` when it is an absolute URL of one of ``schemes`` with a host; else a 400."""
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise BadRequest(f"{where} is not a valid URL") from None
    if parts.scheme.lower() not in schemes or not parts.hostname or any(c.isspace() for c in value.strip()):
        raise BadRequest(f"{where} must be an {' or '.join(schemes)} URL")
    return value.strip()
