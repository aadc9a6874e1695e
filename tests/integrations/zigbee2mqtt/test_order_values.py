"""What an order of a zigbee2mqtt device accepts, from its exposes to the value sent: the orders the
fixture devices declare (``parse_exposes``) checked by the engine's ``resolve_value``."""

from __future__ import annotations

from typing import Any

import pytest

from hausbox.core.errors import BadRequest
from hausbox.devices.device import Order
from hausbox.devices.discovery import OrderSpec
from hausbox.equipments.orders import resolve_value
from hausbox.integrations.builtin.zigbee2mqtt.bridge import discovered_device
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
    assert refused(brightness, 10**400) == "value must be at most 254"


# ---- named values --------------------------------------------------------------------------------
def test_a_name_matches_exactly_before_it_matches_but_for_case_and_true_is_not_one():
    mode = Order("order-id", None, OrderSpec("mode", "enum", enum_values=["Off", "off", 1]))  # type: ignore[arg-type]
    assert resolve_value(mode, "off") == "off" and resolve_value(mode, "OFF") == "Off"
    assert resolve_value(mode, 1) == 1
    assert refused(mode, True) == "value must be one of Off, off, 1"
