"""The tariff document: its schema, its normal form, and how it is kept in the settings store.

A tariff is ``{schedules: [{days: [0..6], slots: [{start, end, tariff}]}], prices: {hp, hc}}``
(day 0 is Sunday, bounds are local ``HH:MM``, prices in euros per kWh). It is stored as one JSON
string under the setting ``energy.tariff``; the same schema checks the tariff route's body and a
value written to that key through ``PUT /settings``.
"""

from __future__ import annotations

import json
from typing import Any

from hausbox.api.schema import NUMBER, BodyValidator, Schema, array, obj, one_of
from hausbox.core.errors import BadRequest

SETTING_KEY = "energy.tariff"
TARIFFS = ("hp", "hc")
MAX_SCHEDULES = 50
MAX_SLOTS = 100
MAX_DAYS = 50

HHMM: Schema = {"type": "string", "minLength": 1, "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9]$"}
DAY: Schema = {"type": "integer", "minimum": 0, "maximum": 6}
SLOT = obj(required={"start": HHMM, "end": HHMM, "tariff": one_of(*TARIFFS)})
SCHEDULE = obj(required={"days": array(DAY, maxItems=MAX_DAYS), "slots": array(SLOT, maxItems=MAX_SLOTS)})
PRICES = obj(required={"hp": NUMBER, "hc": NUMBER})
TARIFF_BODY = obj(required={"schedules": array(SCHEDULE, maxItems=MAX_SCHEDULES), "prices": PRICES})

_VALIDATOR = BodyValidator(TARIFF_BODY)


def empty_tariff() -> dict[str, Any]:
    return {"schedules": [], "prices": {"hp": 0, "hc": 0}}


def normalize(body: Any) -> dict[str, Any]:
    """The tariff with only its known fields; BadRequest naming the field for a malformed one."""
    _VALIDATOR.validate(body)
    return {
        "schedules": [
            {
                "days": list(schedule["days"]),
                "slots": [{key: slot[key] for key in ("start", "end", "tariff")} for slot in schedule["slots"]],
            }
            for schedule in body["schedules"]
        ],
        "prices": {"hp": body["prices"]["hp"], "hc": body["prices"]["hc"]},
    }


def from_setting(value: Any) -> dict[str, Any]:
    """The tariff a stored setting holds (the empty tariff when unset); ValueError if malformed."""
    if value is None:
        return empty_tariff()
    if not isinstance(value, str):
        raise ValueError("must be the tariff as a JSON string")
    try:
        return normalize(json.loads(value))
    except json.JSONDecodeError:
        raise ValueError("must be the tariff as a JSON string") from None
    except BadRequest as error:
        raise ValueError(str(error)) from None


def to_setting(tariff: dict[str, Any]) -> str:
    return json.dumps(tariff, separators=(",", ":"))


def check_setting(value: Any) -> None:
    """The settings store's validator for ``energy.tariff``."""
    from_setting(value)


def is_configured(tariff: dict[str, Any]) -> bool:
    """True iff a price is above 0 (the spec's ``tariffConfigured``)."""
    return any(tariff["prices"][name] > 0 for name in TARIFFS)
