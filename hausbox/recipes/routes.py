"""Routes: /recipes (definitions) and /recipe-instances."""

from __future__ import annotations

from typing import Any

from hausbox.api.query import int_param
from hausbox.api.routing import Call, Route
from hausbox.api.schema import ANY, TEXT, obj, text

PARAMS = {"type": "object"}


def list_recipes(call: Call) -> list[dict[str, Any]]:
    return call.engine.recipes.definitions_json()


def get_recipe(call: Call, recipeId: str) -> dict[str, Any]:
    return call.engine.recipes.definition_json(recipeId)


def list_instances(call: Call) -> list[dict[str, Any]]:
    return call.engine.recipes.list_json()


def create_instance(call: Call) -> dict[str, Any]:
    return call.engine.recipes.create(call.body["recipeId"], call.body["params"])


def update_instance(call: Call, id: str) -> dict[str, Any]:
    return call.engine.recipes.update_params(id, call.body["params"], merge=False)


def delete_instance(call: Call, id: str) -> None:
    call.engine.recipes.delete(id)


def enable_instance(call: Call, id: str) -> dict[str, Any]:
    return call.engine.recipes.enable(id)


def disable_instance(call: Call, id: str) -> dict[str, Any]:
    return call.engine.recipes.disable(id)


def instance_action(call: Call, id: str) -> dict[str, Any]:
    return call.engine.recipes.run_action(id, call.body["action"], call.body.get("payload"))


def instance_log(call: Call, id: str) -> list[dict[str, Any]]:
    return call.engine.recipes.log_entries(id, int_param(call.query, "limit", 50, 1, 1000))


ROUTES = [
    Route("GET", "/recipes", list_recipes, summary="Available recipe definitions"),
    Route("GET", "/recipes/<recipeId>", get_recipe, summary="One recipe definition with its slots and texts"),
    Route("GET", "/recipe-instances", list_instances, summary="Recipe instances with their state"),
    Route("POST", "/recipe-instances", create_instance, body=obj(required={"recipeId": text(200), "params": PARAMS}), status=201, summary="Create (and start) a recipe instance"),
    Route("PUT", "/recipe-instances/<id>", update_instance, body=obj(required={"params": PARAMS}), summary="Re-parameterise an instance (restarted if enabled)"),
    Route("DELETE", "/recipe-instances/<id>", delete_instance, summary="Stop and delete an instance"),
    Route("POST", "/recipe-instances/<id>/enable", enable_instance, summary="Enable and start an instance"),
    Route("POST", "/recipe-instances/<id>/disable", disable_instance, summary="Stop and disable an instance"),
    Route("POST", "/recipe-instances/<id>/actions", instance_action, body=obj(required={"action": TEXT}, optional={"payload": ANY}), summary="Send an action to a running instance"),
    Route("GET", "/recipe-instances/<id>/log", instance_log, summary="Execution log, newest first (limit, default 50)"),
]
