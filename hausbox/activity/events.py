"""The event of the activity feed, with its payload."""

from typing import Any, TypedDict

ACTIVITY_ADDED = "activity.added"


class ActivityAdded(TypedDict):
    item: dict[str, Any]


EVENTS = {ACTIVITY_ADDED: ActivityAdded}
