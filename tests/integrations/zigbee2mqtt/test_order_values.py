"""What an order of a zigbee2mqtt device accepts, from its exposes to the value sent: the orders the
fixture devices declare (``parse_exposes``) checked by the engine's ``resolve_value``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hausbox.core.errors import BadRequest
from hausbox.devices.device import Order
from hausbox.devices.discovery import OrderSpec
from hausbox.equipments.orders import OrderFailed, resolve_value
from hausbox.integrations.builtin.zigbee2mqtt.bridge import discovered_device
from hausbox.integrations.builtin.zigbee2mqtt.exposes import parse_exposes
from tests import zigbee


def order(name: str, key: str) -> Order:
    found = discovered_device(zigbee.entry(name))
    assert found is not None
    spec = next(o for o in found.orders if o.key == key)
    return Order("order-id", None, spec)  # type: ignore[arg-type]


def refused(order: Order, value: Any) -> str:
    with pytest.raises(BadRequest) as raised:
        resolve_value(order, value)
    return raised.value.message


# ---- numeric presets -----------------------------------------------------------------------------
def test_a_numeric_order_lists_its_preset_names_then_the_preset_values_out_of_range():
    assert order("chambre_lampe_chevet", "color_temp").enum_values == ["coolest", "cool", "neutral", "warm", "warmest"]
    startup = order("chambre_lampe_chevet", "color_temp_startup")
    assert (startup.type, startup.min, startup.max) == ("number", 153, 500)
    assert startup.enum_values == ["coolest", "cool", "neutral", "warm", "warmest", "previous", 65535]
    assert order("chambre_lampe_chevet", "brightness").enum_values is None  # no presets


def test_a_preset_name_is_sent_as_the_name_and_numbers_stay_in_range():
    color_temp = order("salon_plafonnier", "color_temp")
    assert resolve_value(color_temp, "warm") == "warm"
    assert resolve_value(color_temp, "Warmest") == "warmest"  # the declared spelling
    assert resolve_value(color_temp, 300) == 300 and resolve_value(color_temp, "300") == 300
    assert refused(color_temp, 464) == "value must be at most 454"
    assert refused(color_temp, "hot") == "value must be a number or one of coolest, cool, neutral, warm, warmest"
    # No value is no value: a number never falls back to its first preset.
    assert refused(color_temp, None).startswith("value must be a number")
    assert refused(color_temp, "").startswith("value must be a number")


def test_a_preset_value_beyond_the_range_is_accepted_as_its_number():
    startup = order("salon_plafonnier", "color_temp_startup")
    assert resolve_value(startup, 65535) == 65535
    assert resolve_value(startup, "previous") == "previous"
    assert refused(startup, 65534) == "value must be at most 454"
    assert resolve_value(startup, "65535") == 65535


# ---- values of another type ----------------------------------------------------------------------
def test_a_boolean_order_takes_only_booleans():
    led = order("entree_mouvement", "led_indication")  # value_on true, value_off false
    assert led.type == "boolean"
    assert resolve_value(led, True) is True and resolve_value(led, "false") is False
    for value in ("yes", "ON", 1, 0, None, {"on": True}):
        assert refused(led, value) == "value must be true or false", value


def test_a_text_order_takes_only_strings():
    effect_color = order("salon_lampadaire", "effect_color")
    assert resolve_value(effect_color, "#FF4400") == "#FF4400"
    for value in (42, None, True, ["#FF4400"]):
        assert refused(effect_color, value) == "value must be a string", value


def test_a_number_order_refuses_what_is_not_a_finite_number():
    brightness = order("salon_plafonnier", "brightness")
    for value in (float("nan"), float("inf"), "1.5e999", "nan", True, [1]):
        assert refused(brightness, value) == "value must be a number", value
    assert refused(brightness, 10**400).startswith("value must be")  # a 400, never an error of the server


# ---- objects, lists and formatted texts: the order's value schema --------------------------------
def test_a_composite_takes_an_object_of_its_settable_features_each_checked_as_its_expose_says():
    level_config = order("salon_plafonnier", "level_config")
    assert level_config.type == "json" and level_config.value_schema["additionalProperties"] is False
    sent = {"execute_if_off": True, "current_level_startup": 128}
    assert resolve_value(level_config, sent) == sent
    assert resolve_value(level_config, {"current_level_startup": "previous"}) == {"current_level_startup": "previous"}  # a preset
    assert refused(level_config, "on") == "value must be an object"
    assert refused(level_config, None) == "value must be an object"
    assert refused(level_config, {"execute_if_off": True, "current_level_startup": 264}) == "value.current_level_startup must be at most 254"
    assert refused(level_config, {"execute_if_off": "yes"}) == "value.execute_if_off must be one of true, false"
    assert refused(level_config, {"execute_if_off": True, "transition": 2}) == "value has no field transition"
    assert refused(level_config, {}) == "value must not be empty"
    warning = order("entree_sirene", "warning")  # set-only features (access 2)
    assert refused(warning, {"mode": "not_a_valid_value"}) == "value.mode must be one of stop, emergency"


def test_a_property_declared_twice_takes_the_features_of_both():
    color = order("salon_lampadaire", "color")  # Hue: color_xy and color_hs
    assert resolve_value(color, {"x": 0.4573, "y": 0.41}) == {"x": 0.4573, "y": 0.41}
    assert resolve_value(color, {"hue": 120, "saturation": 80}) == {"hue": 120, "saturation": 80}
    assert refused(color, {"x": "red", "y": 0.3}) == "value.x must be a number"
    assert refused(order("chambre_lampe_chevet", "color"), {"hue": 120}) == "value has no field hue"  # xy only


def test_a_feature_that_cannot_be_set_is_not_part_of_the_order():
    expose = {"type": "composite", "property": "schedule", "access": 3, "features": [
        {"type": "numeric", "property": "hour", "access": 3, "value_min": 0, "value_max": 23},
        {"type": "text", "property": "status", "access": 1},
    ]}  # fmt: skip
    spec = parse_exposes([expose])[1][0]
    assert list(spec.value_schema["properties"]) == ["hour"]


def test_a_list_takes_an_array_of_its_items():
    expose = {"type": "list", "property": "schedule", "access": 2, "length_min": 1, "length_max": 2,
              "item_type": {"type": "numeric", "name": "temperature", "value_min": 5, "value_max": 30}}  # fmt: skip
    schedule = Order("order-id", None, parse_exposes([expose])[1][0])  # type: ignore[arg-type]
    assert resolve_value(schedule, [20, 21.5]) == [20, 21.5]
    assert refused(schedule, 20) == "value must be an array"
    assert refused(schedule, [20, 31]) == "value[1] must be at most 30"
    assert refused(schedule, []) == "value must have at least 1 items"
    assert refused(schedule, [20, 20, 20]) == "value must have at most 2 items"


def test_a_text_whose_description_states_a_format_takes_only_that_format():
    trigger_time = order("salon_radiateur", "trigger_time")  # "Format: 'HH:MM' ... Send 'undefined' to disable."
    for value in ("03:15", "14:30", "undefined"):
        assert resolve_value(trigger_time, value) == value
    for value in ("3h15", "24:00", "14:30 "):
        assert refused(trigger_time, value) == "value is not in the expected format", value
    assert refused(trigger_time, "") == "value must not be empty"
    effect_color = order("salon_lampadaire", "effect_color")  # "hex e.g. #FF4400, or JSON {"x":0.6,"y":0.3}"
    for value in ("#FF4400", '{"x":0.6,"y":0.3}'):
        assert resolve_value(effect_color, value) == value
    assert refused(effect_color, "#GG0000") == "value is not in the expected format"
    free = parse_exposes([{"type": "text", "property": "label", "access": 2, "description": "Any text"}])[1][0]
    assert free.value_schema is None


def test_a_value_schema_that_is_no_schema_fails_the_order_without_sending_it():
    broken = Order("order-id", SimpleNamespace(name="plug"), OrderSpec("config", "json", value_schema={"type": 42}))  # type: ignore[arg-type]
    with pytest.raises(OrderFailed):
        resolve_value(broken, {"a": 1})


# ---- named values --------------------------------------------------------------------------------
def test_a_name_matches_exactly_before_it_matches_but_for_case_and_true_is_not_one():
    mode = Order("order-id", None, OrderSpec("mode", "enum", enum_values=["Off", "off", 1]))  # type: ignore[arg-type]
    assert resolve_value(mode, "off") == "off" and resolve_value(mode, "OFF") == "Off"
    assert resolve_value(mode, 1) == 1
    assert refused(mode, True) == "value must be one of Off, off, 1"
