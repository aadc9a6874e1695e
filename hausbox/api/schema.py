"""Declarative request-body schemas (JSON Schema) and their validation.

A route declares its body as a JSON Schema built with these helpers; the same schema validates the
request and documents it in the OpenAPI document. Validation failures become a 400 whose message
names the field. Unknown top-level fields are dropped before the handler sees the body.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any, Mapping

from hausbox.core.errors import BadRequest

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
TEXT: Schema = {"type": "string", "minLength": 1, "pattern": r"\S"}  # non-blank
BOOLEAN: Schema = {"type": "boolean"}
# Pony's int columns are 32-bit unless sized: an integer a column stores is bounded so (a route
# that needs more declares its own range; values in free-form objects are bounded by core/values.py).
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INTEGER: Schema = {"type": "integer", "minimum": INT32_MIN, "maximum": INT32_MAX}
NUMBER: Schema = {"type": "number"}
ANY: Schema = {}
# The body of a route that stores or sends a free-form object (preferences, chart and widget configs,
# settings, order values): a size the lists that show it can carry; values.py bounds its depth.
FREE_FORM_MAX_BYTES = 64 << 10


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def text(max_length: int | None = None, min_length: int = 1) -> Schema:
    schema: Schema = {"type": "string", "minLength": min_length}
    if min_length:
        schema["pattern"] = r"\S"
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def one_of(*values: Any) -> Schema:
    return {"enum": list(values)}


def array(items: Schema, **limits: Any) -> Schema:
    return {"type": "array", "items": items, **limits}


def all_or_none(*names: str) -> Schema:
    """Keywords for an object schema: either every one of ``names`` is given, or none of them."""
    return {"anyOf": [{"required": list(names)}, {"not": {"anyOf": [{"required": [name]} for name in names]}}]}


def obj(required: Mapping[str, Schema] | None = None, optional: Mapping[str, Schema] | None = None, **extra: Any) -> Schema:
    """An object schema with required and optional properties; other fields are allowed (ignored)."""
    properties = {**(required or {}), **(optional or {})}
    schema: Schema = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = list(required)
    return schema


_TYPE_WORDS = {
    "string": "a string",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _shown(value: Any) -> str:
    """A value in a message: text as it is, anything else as JSON (true, not True)."""
    return value if isinstance(value, str) else json.dumps(value)


def _where(error: ValidationError) -> str:
    where = ""
    for part in error.absolute_path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "body"


def _message(error: ValidationError) -> str:
    where = _where(error)
    kind = error.validator
    if kind == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        name = missing[0] if missing else error.validator_value[0]
        return f"{name if where == 'body' else where + '.' + name} is required"
    if kind == "type":
        expected = error.validator_value
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in (expected if isinstance(expected, list) else [expected]))
        return f"{where} must be {words}"
    if kind == "enum":
        return f"{where} must be one of {', '.join(map(_shown, error.validator_value))}"
    if kind in ("minLength", "pattern") and isinstance(error.instance, str) and not error.instance.strip():
        return f"{where} must not be empty"
    if kind == "pattern":
        return f"{where} is not in the expected format"
    if kind == "minProperties":
        return f"{where} must not be empty"
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        return f"{where} has no field {', '.join(name for name in error.instance if name not in known)}"
    if kind == "minLength":
        return f"{where} must be at least {error.validator_value} characters"
    if kind == "maxLength":
        return f"{where} must be at most {error.validator_value} characters"
    if kind == "minimum":
        return f"{where} must be at least {error.validator_value}"
    if kind == "maximum":
        return f"{where} must be at most {error.validator_value}"
    if kind == "minItems":
        return f"{where} must have at least {error.validator_value} items"
    if kind == "maxItems":
        return f"{where} must have at most {error.validator_value} items"
    if kind == "anyOf":
        # nullable(X) and friends: report against the first alternative, which is the real type.
        nested = sorted(error.context or [], key=lambda e: len(list(e.relative_schema_path)))
        return _message(nested[0]) if nested else f"{where} is invalid"
    return f"{where}: {error.message}"


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _validator_class() -> Any:
    # Imported at the first validation, not at start: jsonschema is a tenth of the service's start
    # (seconds on a slow board), and a box that has just booted is asked for its health first.
    from jsonschema import Draft202012Validator, validators

    # JSON Schema takes 1.0 for an integer; an integer column does not (13717.0 as displayOrder was a 500).
    return validators.extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


class BodyValidator:
    def __init__(self, schema: Schema):
        # Schemas are static: the test suite checks them against the metaschema (it would cost
        # a fifth of a second at every boot).
        self.schema = schema
        self._validator: Any = None  # compiled at the first body
        self._known = set(schema.get("properties", {})) if self._strips_unknown(schema) else None

    @staticmethod
    def _strips_unknown(schema: Schema) -> bool:
        return schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema and "patternProperties" not in schema

    def validate(self, body: Any) -> Any:
        """Return the body with unknown fields dropped, or raise BadRequest naming the field."""
        if self._validator is None:
            self._validator = _validator_class()(self.schema)
        error = next(iter(sorted(self._validator.iter_errors(body), key=lambda e: (len(e.absolute_path), str(e.validator)))), None)
        if error is not None:
            raise BadRequest(_message(error))
        if self._known is not None:
            return {key: value for key, value in body.items() if key in self._known}
        return body
