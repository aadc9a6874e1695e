"""The hausbox plugin SDK: the whole surface an integration or a recipe may use.

Built-in integrations (``hausbox/integrations/builtin/``) and recipes (``hausbox/recipes/builtin/``)
import this module and nothing else of hausbox (a test enforces it), exactly as a third-party
plugin does. ``SDK_VERSION`` changes when this surface changes; ``API_VERSION`` is the integration
API version a plugin's manifest declares (``apiVersion``).

Integrations: a package with ``manifest.json`` (``id``, ``name``, ``version``, ``description``,
``icon``, ``type: "integration"``, ``apiVersion``) and ``create(context: IntegrationContext) ->
Integration``. The contract (what the context gives, what the integration object provides) is
documented on :class:`IntegrationContext`'s module, ``hausbox/integrations/api.py``.
``context.devices`` is a :class:`DeviceHandle`: the integration's own devices, nothing else.
Discovered devices are described with :class:`DiscoveredDevice`, :class:`DataSpec` and
:class:`OrderSpec` (its ``value_schema``, a JSON Schema, says what a value must be beyond the type,
range and enum values: an object's fields, a text's format; the engine refuses, with a 400, an
order whose value does not satisfy it, before the plugin is called).

Recipes: subclass :class:`Recipe` (typed :class:`Slot` parameters, optional :class:`Action`
commands), return a :class:`Runner` from ``create_instance(params, ctx)``; ``ctx`` is a
:class:`RecipeContext` (``ctx.on``, ``ctx.call_at``/``call_later``, ``ctx.execute_order``,
``ctx.state``, ``ctx.helpers``, ``ctx.log``). Handlers and timers run in the recipes worker,
in order, never on the message path. The full contract: ``hausbox/recipes/api.py``.

Packaging: a plugin folder holds ``manifest.json`` (checked by :func:`check_manifest`; built-in
integrations and recipes have one too, ``type`` ``integration`` or ``recipe``) and its texts, one
file per language: ``texts/en.json``, ``texts/fr.json``, read with ``load_texts(__name__)`` (a
recipe's ``i18n``).

Helpers: durations (``parse_duration``, ``format_duration``), time windows (``in_window``,
``next_boundary``), ``as_text``, ``LIGHT_TYPES``, ``KEY_CATEGORIES`` (well-known data keys and
their categories), timestamps (``iso_utc``, ``parse_iso``).
"""

from hausbox.core.clock import iso_utc, parse_iso
from hausbox.devices.categories import KEY_CATEGORIES
from hausbox.devices.discovery import DataSpec, DiscoveredDevice, OrderSpec
from hausbox.integrations.api import API_VERSION, Integration, IntegrationContext, SettingDef
from hausbox.recipes.api import Action, InvalidParams, Recipe, Runner, Slot
from hausbox.recipes.helpers import LIGHT_TYPES, as_text, format_duration, in_window, next_boundary, parse_duration
from hausbox.recipes.protocols import RecipeContext, ValidationContext
from hausbox.sdk.devices import DeviceHandle
from hausbox.sdk.manifest import ManifestError, check_manifest, load_texts

SDK_VERSION = "1.1"

__all__ = [
    "SDK_VERSION",
    # integrations
    "API_VERSION",
    "DataSpec",
    "DeviceHandle",
    "DiscoveredDevice",
    "Integration",
    "IntegrationContext",
    "OrderSpec",
    "SettingDef",
    # recipes
    "Action",
    "InvalidParams",
    "Recipe",
    "RecipeContext",
    "Runner",
    "Slot",
    "ValidationContext",
    # plugin packaging: manifest.json, texts/<lang>.json
    "ManifestError",
    "check_manifest",
    "load_texts",
    # helpers
    "KEY_CATEGORIES",
    "LIGHT_TYPES",
    "as_text",
    "format_duration",
    "in_window",
    "iso_utc",
    "next_boundary",
    "parse_duration",
    "parse_iso",
]
