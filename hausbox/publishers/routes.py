"""Routes: /mqtt-brokers (reads admin-only: credentials) and /mqtt-publishers (writes admin-only)."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import BOOLEAN, STRING, array, nullable, obj, one_of, text
from hausbox.publishers.service import CREDENTIAL_MAX, KEY_MAX, NAME_MAX, SOURCE_TYPES, TOPIC_MAX, URL_MAX


def list_brokers(call: Call) -> list[dict[str, Any]]:
    return call.engine.publishers.brokers_json()


def create_broker(call: Call) -> dict[str, Any]:
    return call.engine.publishers.create_broker(call.body, call.actor)


def update_broker(call: Call, id: str) -> dict[str, Any]:
    return call.engine.publishers.update_broker(id, call.body, call.actor)


def delete_broker(call: Call, id: str) -> None:
    call.engine.publishers.delete_broker(id, call.actor)


def list_publishers(call: Call) -> list[dict[str, Any]]:
    return call.engine.publishers.publishers_json()


def get_publisher(call: Call, id: str) -> dict[str, Any]:
    return call.engine.publishers.publisher(id).to_json()


def create_publisher(call: Call) -> dict[str, Any]:
    return call.engine.publishers.create_publisher(call.body, call.actor)


def update_publisher(call: Call, id: str) -> dict[str, Any]:
    return call.engine.publishers.update_publisher(id, call.body, call.actor)


def delete_publisher(call: Call, id: str) -> None:
    call.engine.publishers.delete_publisher(id, call.actor)


def test_publisher(call: Call, id: str) -> dict[str, Any]:
    return {"published": call.engine.publishers.test(id)}


def add_mapping(call: Call, id: str) -> dict[str, Any]:
    return call.engine.publishers.add_mapping(id, call.body)


def update_mapping(call: Call, id: str, mappingId: str) -> dict[str, Any]:
    return call.engine.publishers.update_mapping(id, mappingId, call.body)


def delete_mapping(call: Call, id: str, mappingId: str) -> None:
    call.engine.publishers.delete_mapping(id, mappingId)


# Bodies (spec: MQTT broker, MQTT publisher). Null username or password clears it.
BROKER_FIELDS = {"name": text(NAME_MAX), "url": text(URL_MAX)}
CREDENTIALS = {"username": nullable(text(CREDENTIAL_MAX, min_length=0)), "password": nullable({**STRING, "maxLength": CREDENTIAL_MAX})}
PUBLISHER_FIELDS = {"name": text(NAME_MAX), "brokerId": text(100), "topic": text(TOPIC_MAX)}
PUBLISHER_FLAGS = {"enabled": BOOLEAN, "onChangeOnly": BOOLEAN}
MAPPING_FIELDS = {"publishKey": text(KEY_MAX), "sourceType": one_of(*SOURCE_TYPES), "sourceId": text(100), "sourceKey": text(KEY_MAX)}

# Responses (documentation only).
BROKER = obj(
    required={"id": STRING, "name": STRING, "url": STRING, "status": one_of("connecting", "connected", "disconnected", "error", "held"),
              "connected": BOOLEAN, "lastError": nullable(STRING), "createdAt": STRING, "updatedAt": STRING},
    optional={"username": STRING, "password": STRING},
    description="A broker, with its client's state; username and password when set (administrators only)",
)  # fmt: skip
MAPPING = obj(
    required={"id": STRING, "publisherId": STRING, **MAPPING_FIELDS, "enabled": BOOLEAN, "createdAt": STRING},
    description="A mapping: publishes {publishKey: value} when the source's sourceKey changes",
)
PUBLISHER = obj(
    required={"id": STRING, **PUBLISHER_FIELDS, **PUBLISHER_FLAGS, "createdAt": STRING, "updatedAt": STRING, "mappings": array(MAPPING)},
    description="A publisher with its mappings",
)

ROUTES = [
    Route("GET", "/mqtt-brokers", list_brokers, summary="MQTT brokers, with credentials and connection state", response={**array(BROKER), "description": "Brokers"}),
    Route("POST", "/mqtt-brokers", create_broker, body=obj(required=BROKER_FIELDS, optional=CREDENTIALS), status=201, summary="Add an MQTT broker", response=BROKER),
    Route("PUT", "/mqtt-brokers/<id>", update_broker, body=obj(optional={**BROKER_FIELDS, **CREDENTIALS}), summary="Update an MQTT broker (reconnects)", response=BROKER),
    Route("DELETE", "/mqtt-brokers/<id>", delete_broker, summary="Delete an MQTT broker (409 naming the publishers that use it)"),
    Route("GET", "/mqtt-publishers", list_publishers, summary="MQTT publishers with their mappings", response={**array(PUBLISHER), "description": "Publishers"}),
    Route("GET", "/mqtt-publishers/<id>", get_publisher, summary="One MQTT publisher with its mappings", response=PUBLISHER),
    Route(
        "POST", "/mqtt-publishers", create_publisher, body=obj(required=PUBLISHER_FIELDS, optional=PUBLISHER_FLAGS), status=201,
        summary="Add an MQTT publisher (one topic; enabled by default, onChangeOnly off)", response=PUBLISHER,
    ),  # fmt: skip
    Route("PUT", "/mqtt-publishers/<id>", update_publisher, body=obj(optional={**PUBLISHER_FIELDS, **PUBLISHER_FLAGS}), summary="Update an MQTT publisher (publishes its snapshot)", response=PUBLISHER),
    Route("DELETE", "/mqtt-publishers/<id>", delete_publisher, summary="Delete an MQTT publisher and its mappings"),
    Route(
        "POST", "/mqtt-publishers/<id>/test", test_publisher, summary="Publish the publisher's snapshot now (0 when its broker is not connected)",
        response=obj(required={"published": {"type": "integer"}}, description="How many messages were published"),
    ),  # fmt: skip
    Route(
        "POST", "/mqtt-publishers/<id>/mappings", add_mapping, body=obj(required=MAPPING_FIELDS, optional={"enabled": BOOLEAN}), status=201,
        summary="Add a mapping (409 when the publishKey is taken in this publisher)", response=MAPPING,
    ),  # fmt: skip
    Route(
        "PUT", "/mqtt-publishers/<id>/mappings/<mappingId>", update_mapping, body=obj(optional={**MAPPING_FIELDS, "enabled": BOOLEAN}),
        summary="Update a mapping (409 when the publishKey is taken in this publisher)", response=MAPPING,
    ),  # fmt: skip
    Route("DELETE", "/mqtt-publishers/<id>/mappings/<mappingId>", delete_mapping, summary="Delete a mapping"),
]
