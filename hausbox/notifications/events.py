"""The events of notification publishers, with their payloads (never delivered to non-admins; the
publisher they carry has its channel secrets masked)."""

from typing import Any, TypedDict

PUBLISHER_CREATED = "notification-publisher.created"
PUBLISHER_UPDATED = "notification-publisher.updated"
PUBLISHER_REMOVED = "notification-publisher.removed"
MAPPING_CREATED = "notification-publisher.mapping.created"
MAPPING_REMOVED = "notification-publisher.mapping.removed"


class PublisherBody(TypedDict):
    publisher: dict[str, Any]


class PublisherRemoved(TypedDict):
    publisherId: str
    publisherName: str


class MappingCreated(TypedDict):
    publisherId: str
    mapping: dict[str, Any]


class MappingRemoved(TypedDict):
    publisherId: str
    mappingId: str


EVENTS = {
    PUBLISHER_CREATED: PublisherBody,
    PUBLISHER_UPDATED: PublisherBody,
    PUBLISHER_REMOVED: PublisherRemoved,
    MAPPING_CREATED: MappingCreated,
    MAPPING_REMOVED: MappingRemoved,
}
