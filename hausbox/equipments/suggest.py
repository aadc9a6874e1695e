"""Which devices fit an equipment type (``GET /devices/suggest?type=``).

For every equipment type a ``Fit`` says which device data make its *state* side and which device
orders make its *command* side. Each side is a list of requirements (all must be met) plus extras
that are listed when present. A device that meets both sides is ``complete``; one that meets only
one (or part of one: a single relay for a two-relay VMC) is ``state_only`` or ``command_only``. For a
type with no command side, or no state side, the one side it has is enough to be complete. Devices
that match neither side are not suggested. Every equipment type has a ``Fit`` (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from hausbox.core.errors import BadRequest
from hausbox.devices.device import Datum, Device, Order

Match = Callable[[Any], bool]  # a Datum or an Order -> bool
ON_OFF_WORDS = frozenset({"on", "off", "toggle"})
COMPLETENESS_RANK = {"complete": 0, "state_only": 1, "command_only": 2}


def category(*names: str) -> Match:
    wanted = frozenset(names)
    return lambda item: item.category in wanted


def key(*names: str) -> Match:
    wanted = frozenset(names)
    return lambda item: item.key in wanted


def any_of(*matches: Match) -> Match:
    return lambda item: any(match(item) for match in matches)


def _on_off_vocabulary(item: Any) -> bool:
    if item.type == "boolean":
        return True
    values = item.enum_values or ()
    return bool(values) and all(isinstance(v, str) and v.strip().lower() in ON_OFF_WORDS for v in values)


def _relay_key(item: Any) -> bool:
    return item.key == "state" or item.key.startswith("state_") or item.key in ("switch", "relay", "power_state")


def on_off(item: Any) -> bool:
    """An on/off relay (order) or its state (datum): ``state`` / ``state_l1`` ... with ON/OFF values."""
    return _relay_key(item) and _on_off_vocabulary(item)


ANY: Match = lambda _item: True  # noqa: E731


@dataclass(frozen=True)
class Side:
    required: tuple[Match, ...] = ()  # each must match at least one key
    extras: tuple[Match, ...] = ()  # listed when present, never required
    at_least: int = 1  # how many keys the first requirement must match (a VMC needs two relays)

    @property
    def empty(self) -> bool:
        return not self.required

    def match(self, items: Iterable[Any]) -> tuple[bool, bool, list[str]]:
        """``(met, partly met, matched keys)`` over a device's data or orders."""
        items = list(items)
        matched: list[str] = []
        met, partly = bool(self.required), False
        for index, match in enumerate(self.required):
            hits = [item.key for item in items if match(item)]
            if len(hits) < (self.at_least if index == 0 else 1):
                met = False
            partly = partly or bool(hits)
            matched += hits
        for match in self.extras:
            matched += [item.key for item in items if match(item)]
        return met, partly and not met, sorted(set(matched))


@dataclass(frozen=True)
class Fit:
    state: Side = field(default_factory=Side)
    command: Side = field(default_factory=Side)


_LIGHT_STATE = any_of(category("light_state"), on_off)
_LIGHT_TOGGLE = any_of(category("light_toggle", "toggle_power"), on_off)
_RELAY_STATE = any_of(category("light_state"), on_off)
_RELAY_ORDER = any_of(category("light_toggle", "toggle_power"), on_off)
_METERING = category("power", "energy", "voltage", "current")
_POSITION_STATE = category("shutter_position", "cover_state")
_COVER_ORDER = category("shutter_move", "set_shutter_position")
_SETPOINT_STATE = any_of(category("setpoint"), key("current_heating_setpoint", "occupied_heating_setpoint", "setpoint", "target_temperature"))
_SETPOINT_ORDER = any_of(category("set_setpoint"), key("current_heating_setpoint", "occupied_heating_setpoint", "setpoint", "target_temperature"))
_MODE = any_of(category("operation_mode", "set_operation_mode"), key("system_mode", "operation_mode", "mode", "preset"))
_SENSING = category(
    "temperature", "humidity", "motion", "contact_door", "contact_window", "luminosity", "pressure",
    "co2", "voc", "noise", "water_leak", "smoke",
)  # fmt: skip
_WEATHER = category("wind", "rain", "uv", "solar_radiation", "weather_condition", "temperature_outdoor", "humidity_outdoor")
_URL = any_of(key("snapshot_url", "stream_url"), lambda item: item.type == "text" and "url" in item.key.lower())

FITS: dict[str, Fit] = {
    "light_onoff": Fit(Side((_LIGHT_STATE,)), Side((_LIGHT_TOGGLE,))),
    "light_dimmable": Fit(Side((_LIGHT_STATE,), (category("light_brightness"),)), Side((_LIGHT_TOGGLE, category("set_brightness")))),
    "light_color": Fit(
        Side((_LIGHT_STATE,), (category("light_brightness", "light_color_temp", "light_color"),)),
        Side((_LIGHT_TOGGLE, category("set_color", "set_color_temp")), (category("set_brightness"),)),
    ),
    "switch": Fit(Side((_RELAY_STATE,), (_METERING,)), Side((_RELAY_ORDER,))),
    "water_heater": Fit(Side((_RELAY_STATE,), (_METERING, category("temperature"))), Side((_RELAY_ORDER,))),
    "pool_pump": Fit(Side((_RELAY_STATE,), (_METERING,)), Side((any_of(category("pool_pump_toggle"), _RELAY_ORDER),))),
    "water_valve": Fit(Side((_RELAY_STATE,), (category("water_leak"),)), Side((any_of(category("valve_toggle"), _RELAY_ORDER),))),
    "heater": Fit(
        Side((any_of(_RELAY_STATE, _SETPOINT_STATE, _MODE),), (category("temperature"), _METERING)),
        Side((any_of(_RELAY_ORDER, _SETPOINT_ORDER, _MODE),)),
    ),
    "thermostat": Fit(
        Side((any_of(_SETPOINT_STATE, category("temperature")),), (_MODE, category("humidity"))),
        Side((_SETPOINT_ORDER,), (_MODE, category("toggle_power"))),
    ),
    "pool_heat_pump": Fit(
        Side((any_of(_SETPOINT_STATE, category("temperature", "appliance_state")),), (_MODE, _METERING)),
        Side((any_of(_SETPOINT_ORDER, _MODE, _RELAY_ORDER),)),
    ),
    "shutter": Fit(Side((_POSITION_STATE,)), Side((_COVER_ORDER,))),
    "awning": Fit(Side((_POSITION_STATE,)), Side((_COVER_ORDER,))),
    "pool_cover": Fit(Side((_POSITION_STATE,)), Side((any_of(_COVER_ORDER, category("pool_cover_move", "pool_cover_position")),))),
    "gate": Fit(Side((category("contact_door", "contact_window", "gate_state"),)), Side((ANY,))),
    "sensor": Fit(Side((_SENSING,), (category("battery"),))),
    "button": Fit(Side((category("action"),), (category("battery"),))),
    "weather": Fit(Side((_WEATHER,), (category("temperature", "humidity", "pressure"),))),
    "weather_forecast": Fit(Side((category("weather_condition", "temperature_outdoor", "rain", "wind"),))),
    "energy_meter": Fit(Side((category("power", "energy"),), (category("voltage", "current"),))),
    "main_energy_meter": Fit(Side((category("power", "energy"),), (category("voltage", "current"),))),
    "energy_production_meter": Fit(Side((category("power", "energy"),), (category("voltage", "current"),))),
    "solar_panel": Fit(Side((category("power", "energy"),), (category("voltage", "current"),))),
    "ups": Fit(Side((category("power", "voltage"),), (category("battery", "current", "energy"),))),
    "appliance": Fit(Side((any_of(category("appliance_state"), _METERING),)), Side((), (any_of(category("toggle_power"), _RELAY_ORDER),))),
    "media_player": Fit(
        Side((category("media_volume", "media_mute", "media_input"),)),
        Side((any_of(category("toggle_mute", "set_input", "toggle_power"), key("volume", "mute", "input", "source")),)),
    ),
    "display": Fit(Side((), (_RELAY_STATE, category("light_brightness"))), Side((any_of(_RELAY_ORDER, category("set_brightness")),))),
    "camera": Fit(Side((_URL,), (category("motion"),))),
    "vmc": Fit(Side((), (_RELAY_STATE,)), Side((_RELAY_ORDER,), at_least=2)),
}


def completeness(fit: Fit, state: tuple[bool, bool], command: tuple[bool, bool]) -> str | None:
    """From each side's ``(met, partly met)``; a side the type does not have is met by the other."""
    (state_met, state_partly), (command_met, command_partly) = state, command
    if (state_met or (fit.state.empty and command_met)) and (command_met or (fit.command.empty and state_met)):
        return "complete"
    if state_met:
        return "state_only"
    if command_met or command_partly:
        return "command_only"
    if state_partly:
        return "state_only"
    return None


def suggest(devices: Iterable[Device], equipment_type: str) -> list[dict[str, Any]]:
    fit = FITS.get(equipment_type)
    if fit is None:
        raise BadRequest(f"Invalid equipment type: {equipment_type}")
    found = []
    for device in devices:
        data: list[Datum] = list(device.data.values())
        orders: list[Order] = list(device.orders.values())
        state_met, state_partly, state_keys = fit.state.match(data)
        command_met, command_partly, command_keys = fit.command.match(orders)
        level = completeness(fit, (state_met, state_partly), (command_met, command_partly))
        if level is None:
            continue
        found.append(
            {
                "device": {"id": device.id, "name": device.name, "source": device.source},
                "completeness": level,
                "stateKeys": state_keys,
                "commandKeys": command_keys,
            }
        )
    found.sort(key=lambda item: (COMPLETENESS_RANK[item["completeness"]], item["device"]["name"].lower(), item["device"]["id"]))
    return found

