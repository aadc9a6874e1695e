"""The settings store: a flat key to value map, cached in memory, persisted in the database.

Values are JSON scalars (string, number, boolean). Setting a key to None deletes it. Every write
that changes something emits ``settings.changed {keys}`` with the keys whose value changed.
A service that owns a key may register a validator for it: a write with a bad value is refused as
a whole (400 naming the key) before anything is stored.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from pony import orm

from hausbox.core.bus import EventBus
from hausbox.core.clock import now_ms
from hausbox.core.errors import BadRequest
from hausbox.core.logs import by_actor, get_logger
from hausbox.core.urls import mask_credentials

Scalar = str | int | float | bool
# Raises ValueError (its text says what is expected) for a value the key must not hold.
Validator = Callable[[Scalar], None]
# The same for a family of keys (``camera.<id>.snapshotUrl``): called with the key and the value.
KeyValidator = Callable[[str, Scalar], None]

# A key whose last segment contains one of these holds a secret: never logged, masked where shown.
SECRET_KEY_MARKERS = ("password", "secret", "token", "apikey", "api_key")
SHOWN_VALUE_MAX = 200  # a long value is cut in the log line

log = get_logger("settings")


def is_secret_key(key: str) -> bool:
    last = key.rsplit(".", 1)[-1].lower()
    return any(marker in last for marker in SECRET_KEY_MARKERS)


def describe_change(key: str, value: Scalar | None) -> str:
    """How a log line shows one written key: its new value, unless the key holds a secret."""
    if value is None:
        return f"{key} removed"
    if is_secret_key(key):
        return f"{key} set (secret, not shown)"
    shown = json.dumps(mask_credentials(value) if isinstance(value, str) else value)
    return f"{key} = {shown if len(shown) <= SHOWN_VALUE_MAX else shown[:SHOWN_VALUE_MAX] + '…'}"


def define_entities(db: orm.Database) -> None:
    class Setting(db.Entity):
        _table_ = "settings"
        key = orm.PrimaryKey(str)
        value = orm.Required(str)
        updated_at = orm.Required(int, size=64)


class SettingsStore:
    def __init__(self, db: orm.Database, bus: EventBus, on_secret: Callable[[str], None] | None = None):
        self._db = db
        self._bus = bus
        self._on_secret = on_secret or (lambda _value: None)
        self._validators: dict[str, Validator] = {}
        self._prefix_validators: dict[str, KeyValidator] = {}
        with orm.db_session:
            self._values: dict[str, Scalar] = {row.key: json.loads(row.value) for row in db.Setting.select()}
        for key, value in self._values.items():
            self._note_secret(key, value)

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def all(self) -> dict[str, Scalar]:
        return dict(self._values)

    def with_prefix(self, prefix: str) -> dict[str, Scalar]:
        """Settings whose key starts with ``prefix``, keyed without it."""
        return {key[len(prefix):]: value for key, value in self._values.items() if key.startswith(prefix)}

    def add_validator(self, key: str, validator: Validator) -> None:
        """Check every non-null value written to ``key`` (deleting a key is always allowed)."""
        self._validators[key] = validator

    def add_prefix_validator(self, prefix: str, validator: KeyValidator) -> None:
        """Check every non-null value written to a key that starts with ``prefix``."""
        self._prefix_validators[prefix] = validator

    def validate(self, values: Mapping[str, Scalar | None]) -> None:
        """BadRequest ``Invalid setting <key>: <reason>`` for the first value its validator refuses."""
        for key, value in values.items():
            if value is None:
                continue
            try:
                self._check(key, value)
            except ValueError as error:
                raise BadRequest(f"Invalid setting {key}: {error}") from None

    def _check(self, key: str, value: Scalar) -> None:
        validator = self._validators.get(key)
        if validator is not None:
            validator(value)
        for prefix, check in self._prefix_validators.items():
            if key.startswith(prefix):
                check(key, value)

    def set_many(self, values: Mapping[str, Scalar | None], by: str | None = None) -> list[str]:
        """Write all values in one transaction; return (and announce, and log) the keys that changed."""
        self.validate(values)
        changed = [key for key, value in values.items() if self._differs(key, value)]
        if not changed:
            return []
        stamp = now_ms()
        with orm.db_session:
            for key in changed:
                value = values[key]
                row = self._db.Setting.get(key=key)
                if value is None:
                    if row:
                        row.delete()
                elif row:
                    row.value, row.updated_at = json.dumps(value), stamp
                else:
                    self._db.Setting(key=key, value=json.dumps(value), updated_at=stamp)
        for key in changed:
            value = values[key]
            if value is None:
                self._values.pop(key, None)
            else:
                self._values[key] = value
                self._note_secret(key, value)
        keys = sorted(changed)
        log.info("settings changed%s: %s", by_actor(by), ", ".join(describe_change(key, values[key]) for key in keys))
        self._bus.emit("settings.changed", keys=keys)
        return keys

    def set(self, key: str, value: Scalar | None) -> bool:
        return bool(self.set_many({key: value}))

    def _differs(self, key: str, value: Scalar | None) -> bool:
        if key not in self._values:
            return value is not None
        current = self._values[key]
        return value is None or type(current) is not type(value) or current != value

    def scoped(self, prefix: str) -> "ScopedSettings":
        return ScopedSettings(self, prefix)

    def _note_secret(self, key: str, value: Any) -> None:
        if is_secret_key(key) and isinstance(value, str) and value:
            self._on_secret(value)


class ScopedSettings:
    """The view an integration gets: only keys under its own prefix, e.g. ``integration.<id>.``."""

    def __init__(self, store: SettingsStore, prefix: str):
        self._store = store
        self.prefix = prefix

    def get(self, key: str, default: Any = None) -> Any:
        return self._store.get(self.prefix + key, default)

    def all(self) -> dict[str, Scalar]:
        return self._store.with_prefix(self.prefix)

    def set_many(self, values: Mapping[str, Scalar | None]) -> list[str]:
        return self._store.set_many({self.prefix + key: value for key, value in values.items()})

    def set(self, key: str, value: Scalar | None) -> bool:
        return self._store.set(self.prefix + key, value)

    def keys_changed(self, keys: Iterable[str]) -> list[str]:
        """Of the changed ``keys`` of a settings.changed event, those in this scope (unprefixed)."""
        return [key[len(self.prefix):] for key in keys if key.startswith(self.prefix)]
