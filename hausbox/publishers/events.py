"""The events of MQTT brokers and publishers, with their payloads.

A broker in an event is the public form (``PublisherService.broker_event_json``): no password, the
URL's credentials masked. Events reach WebSocket clients; a broker's password reaches only an
administrator's ``GET /mqtt-brokers``.
"""

from typing import Any, TypedDict

from hausbox.core.event_payloads import MappingCreated, MappingRemoved, PublisherBody, PublisherRemoved

BROKER_CREATED = "mqtt-broker.created"
BROKER_UPDATED = "mqtt-broker.updated"
BROKER_REMOVED = "mqtt-broker.removed"
PUBLISHER_CREATED = "mqtt-publisher.created"
PUBLISHER_UPDATED = "mqtt-publisher.updated"
PUBLISHER_REMOVED = "mqtt-publisher.removed"
MAPPING_CREATED = "mqtt-publisher.mapping.created"
MAPPING_REMOVED = "mqtt-publisher.mapping.removed"


class BrokerBody(TypedDict):
    broker: dict[str, Any]


class BrokerRemoved(TypedDict):
    brokerId: str


EVENTS = {
    BROKER_CREATED: BrokerBody,
    BROKER_UPDATED: BrokerBody,
    BROKER_REMOVED: BrokerRemoved,
    PUBLISHER_CREATED: PublisherBody,
    PUBLISHER_UPDATED: PublisherBody,
    PUBLISHER_REMOVED: PublisherRemoved,
    MAPPING_CREATED: MappingCreated,
    MAPPING_REMOVED: MappingRemoved,
}
