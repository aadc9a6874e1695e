"""The events of recipe instances, with their payloads."""

from typing import TypedDict

INSTANCE_CREATED = "recipe.instance.created"
INSTANCE_REMOVED = "recipe.instance.removed"
INSTANCE_STARTED = "recipe.instance.started"
INSTANCE_STOPPED = "recipe.instance.stopped"
INSTANCE_STATE_CHANGED = "recipe.instance.state.changed"
INSTANCE_ERROR = "recipe.instance.error"


class InstanceEvent(TypedDict):
    instanceId: str
    recipeId: str


class InstanceError(TypedDict):
    instanceId: str
    recipeId: str
    error: str


EVENTS = {
    INSTANCE_CREATED: InstanceEvent,
    INSTANCE_REMOVED: InstanceEvent,
    INSTANCE_STARTED: InstanceEvent,
    INSTANCE_STOPPED: InstanceEvent,
    INSTANCE_STATE_CHANGED: InstanceEvent,
    INSTANCE_ERROR: InstanceError,
}
