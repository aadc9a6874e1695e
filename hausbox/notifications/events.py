"""The events of notification publishers, with their payloads (never delivered to non-admins; the
publisher they carry has its channel secrets masked)."""

from hausbox.core.event_payloads import MappingCreated, MappingRemoved, PublisherBody, PublisherRemoved

PUBLISHER_CREATED = "notification-publisher.created"
PUBLISHER_UPDATED = "notification-publisher.updated"
PUBLISHER_REMOVED = "notification-publisher.removed"
MAPPING_CREATED = "notification-publisher.mapping.created"
MAPPING_REMOVED = "notification-publisher.mapping.removed"


EVENTS = {
    PUBLISHER_CREATED: PublisherBody,
    PUBLISHER_UPDATED: PublisherBody,
    PUBLISHER_REMOVED: PublisherRemoved,
    MAPPING_CREATED: MappingCreated,
    MAPPING_REMOVED: MappingRemoved,
}
