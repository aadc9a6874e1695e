"""Write-time checks of what an action names: equipments and their orders, zones, recipe instances.

Mode impacts and button bindings are validated when they are written, so a configuration that
names something missing is refused with a 400 naming the field (``actions[2].equipmentId: ...``)
rather than failing silently later. Shared by the mode and button domains.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from hausbox.core.errors import ApiError, BadRequest
from hausbox.equipments.manager import EquipmentManager
from hausbox.equipments.orders import resolve_value
from hausbox.equipments.vmc import ALIAS as VMC_SPEED_ALIAS
from hausbox.zones.tree import ZoneTree

# The recipe service (engine.recipes) when it exists: enable(id), disable(id), update_params(id,
# params), get_instance(id). Looked up at call time: the recipe domain is built independently.
RecipesLookup = Callable[[], Any]


def field(body: Mapping[str, Any], where: str, name: str, kind: type, words: str, required: bool = True) -> Any:
    """``body[name]`` checked for presence and type; the error names ``<where>.<name>``."""
    if name not in body:
        if required:
            raise BadRequest(f"{where}.{name} is required")
        return None
    value = body[name]
    if value is None and not required:
        return None
    if not isinstance(value, kind):
        raise BadRequest(f"{where}.{name} must be {words}")
    if kind is str and not value.strip():
        raise BadRequest(f"{where}.{name} must not be empty")
    return value


class References:
    def __init__(self, equipments: EquipmentManager, zones: ZoneTree, recipes: RecipesLookup):
        self._equipments = equipments
        self._zones = zones
        self._recipes = recipes

    def recipes(self) -> Any:
        """The recipe service, or None while the engine has none."""
        return self._recipes()

    # ---- checks (raise BadRequest naming the field) ---------------------------------------------
    def order(self, where: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``{equipmentId, orderAlias, value}``: the equipment exists and carries the order."""
        equipment_id = field(body, where, "equipmentId", str, "a string")
        alias = field(body, where, "orderAlias", str, "a string")
        if "value" not in body:
            raise BadRequest(f"{where}.value is required")
        value = body["value"]
        equipment = self._equipments.get(equipment_id)
        if equipment is None:
            raise BadRequest(f"{where}.equipmentId: equipment not found: {equipment_id}")
        if alias in equipment.order_bindings:
            order = self._equipments.order_of(equipment, alias)
            if order is not None:
                try:
                    resolve_value(order, value)
                except BadRequest as error:
                    raise BadRequest(f"{where}.{error.message}") from None
        elif not (alias == VMC_SPEED_ALIAS and equipment.type == "vmc"):
            raise BadRequest(f"{where}.orderAlias: equipment {equipment.name} has no order {alias}")
        return {"equipmentId": equipment_id, "orderAlias": alias, "value": value}

    def recipe_instance(self, where: str, body: Mapping[str, Any]) -> str:
        instance_id = field(body, where, "instanceId", str, "a string")
        if not self.instance_exists(instance_id):
            raise BadRequest(f"{where}.instanceId: recipe instance not found: {instance_id}")
        return instance_id

    def zone(self, where: str, body: Mapping[str, Any]) -> str:
        zone_id = field(body, where, "zoneId", str, "a string")
        if not self._zones.exists(zone_id):
            raise BadRequest(f"{where}.zoneId: zone not found: {zone_id}")
        return zone_id

    def instance_exists(self, instance_id: str) -> bool:
        recipes = self._recipes()
        if recipes is None:
            return False
        try:
            return recipes.get_instance(instance_id) is not None  # None (or a 404) when unknown
        except LookupError:
            return False
        except ApiError as error:
            if error.status == 404:
                return False
            raise
