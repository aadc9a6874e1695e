"""The recipe plugin API: what a definition must declare, and how the registry shows it."""

from __future__ import annotations

import copy

import pytest

from hausbox.recipes.api import Action, Recipe, Slot, check_definition
from hausbox.recipes.helpers import format_duration, in_window, parse_duration
from hausbox.recipes.registry import RecipeRegistry
from hausbox.sdk import load_texts
from hausbox.sdk.manifest import builtin_manifests

TEXTS = {
    "en": {"name": "Lamp", "description": "d", "slots": {"ask": {"name": "Ask first"}}, "groups": {}},
    "fr": {"name": "Lampe", "description": "d", "slots": {"ask": {"name": "Demander"}}, "groups": {}},
}


def recipe(**attributes):
    class Custom(Recipe):
        id = "custom-one"
        slots = (Slot("ask", "boolean"),)
        actions = (Action("toggle", "cycle", "on", ({"value": True, "label": "On"}, {"value": False, "label": "Off"})),)
        i18n = copy.deepcopy(TEXTS)

    for name, value in attributes.items():
        setattr(Custom, name, value)
    return Custom()


def test_the_builtins_are_registered_through_the_api_with_english_and_french_texts():
    registry = RecipeRegistry()
    registry.load_builtins()
    ids = {
        "motion-light", "motion-light-dimmable", "switch-light", "state-watch", "presence-thermostat", "presence-heater",
        "pool-pump-schedule", "freecooling", "auto-watering",
    }  # fmt: skip
    assert {r.id for r in registry.all()} == ids
    for definition in registry.list_json():
        assert definition["id"] == definition["recipeId"]
    # each is a plugin folder: a recipe manifest, its texts one file per language
    manifests = builtin_manifests("hausbox.recipes.builtin", "recipe")
    assert {m["id"] for _, m in manifests} == ids
    for module_name, manifest in manifests:
        texts = load_texts(module_name)
        assert registry.get(manifest["id"]).i18n == texts and set(texts) == {"en", "fr"}
        assert manifest["name"] == texts["en"]["name"] and manifest["type"] == "recipe"
        assert set(definition["i18n"]) == {"en", "fr"}
        for slot in definition["slots"]:
            assert slot["type"] in ("zone", "equipment", "number", "duration", "time", "boolean", "text", "data-key", "object")
            assert definition["i18n"]["fr"]["slots"][slot["id"]]["name"]
    thermostat = next(d for d in registry.list_json() if d["id"] == "presence-thermostat")
    assert thermostat["actions"][0]["id"] == "set_mode" and thermostat["tile"] == {"stateKey": "currentMode", "action": "set_mode"}
    motion = next(d for d in registry.list_json() if d["id"] == "motion-light")
    timeout = next(s for s in motion["slots"] if s["id"] == "timeout")
    assert timeout == {"id": "timeout", "name": "Timeout", "description": timeout["description"], "type": "duration", "required": False, "defaultValue": "10m"}
    lights = next(s for s in motion["slots"] if s["id"] == "lights")
    assert lights["list"] is True and lights["constraints"] == {"equipmentType": ["light_onoff", "light_dimmable", "light_color"]}
    watering = next(d for d in registry.list_json() if d["id"] == "auto-watering")
    slots = next(s for s in watering["slots"] if s["id"] == "slots")
    assert (slots["type"], slots["list"], slots["required"]) == ("object", True, True)
    assert {s["id"]: s.get("defaultValue") for s in watering["slots"] if s["id"].endswith("Threshold")} == {"rainThreshold": 5, "rainProbabilityThreshold": 75}
    cooling = next(d for d in registry.list_json() if d["id"] == "freecooling")
    assert [(s["id"], s.get("defaultValue")) for s in cooling["slots"]] == [("zone", None), ("offsetMinutes", 120)]


def test_a_definition_breaking_the_rules_is_refused():
    no_french = copy.deepcopy(TEXTS)
    del no_french["fr"]
    no_slot_text = copy.deepcopy(TEXTS)
    no_slot_text["fr"]["slots"] = {}
    cases = {
        "id must be lower-case": {"id": "Custom One"},
        "i18n.fr needs a name": {"i18n": no_french},
        "no name for slot ask": {"i18n": no_slot_text},
        "unknown type": {"slots": (Slot("ask", "colour"),)},
        "tile.action must name": {"tile": {"action": "nope"}},
        "tile.confirm needs the question in en and fr": {"tile": {"action": "toggle", "confirm": {"en": "Sure?"}}},
        "tile.confirmParam must name a boolean slot": {"tile": {"confirm": {"en": "Sure?", "fr": "Sûr ?"}, "confirmFrom": "param", "confirmParam": "nope"}},
        "tile.confirmFrom must be recipe or param": {"tile": {"confirm": {"en": "a", "fr": "b"}, "confirmFrom": "user"}},
        "no label for group": {"slots": (Slot("ask", "boolean", group="g"),)},
    }
    for message, attributes in cases.items():
        with pytest.raises(ValueError, match=message):
            check_definition(recipe(**attributes))
    check_definition(recipe(tile={"stateKey": "on", "action": "toggle", "confirm": {"en": "Sure?", "fr": "Sûr ?"}, "confirmFrom": "param", "confirmParam": "ask"}))


def test_a_plugin_recipe_registers_once_and_shows_its_tile():
    registry = RecipeRegistry()
    tile = {"stateKey": "on", "action": "toggle", "confirm": {"en": "Sure?", "fr": "Sûr ?"}}
    registry.register(recipe(tile=tile))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(recipe())
    shown = registry.list_json()[0]
    assert shown["tile"] == tile and shown["name"] == "Lamp" and shown["i18n"]["fr"]["name"] == "Lampe"


def test_durations_and_windows():
    assert [parse_duration(v) for v in ("10m", "30s", "1h", "2 h", 1500)] == [600_000, 30_000, 3_600_000, 7_200_000, 1500]
    for bad in ("10", "m", "-1s", -5, True, None, "1d"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert [format_duration(v) for v in (3_600_000, 5_400_000, 600_000, 59_000, 500)] == ["1h", "2h", "10min", "59s", "0s"]
    from datetime import datetime

    at = lambda hhmm: datetime.strptime(f"2026-06-15 {hhmm}", "%Y-%m-%d %H:%M")  # noqa: E731
    assert in_window(at("23:00"), "22:00", "06:00") and in_window(at("05:59"), "22:00", "06:00")
    assert not in_window(at("06:00"), "22:00", "06:00") and not in_window(at("12:00"), "22:00", "06:00")
    assert in_window(at("10:00"), "10:00", "12:00") and not in_window(at("12:00"), "10:00", "12:00")
