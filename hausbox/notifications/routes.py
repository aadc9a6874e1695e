"""Routes: /notification-publishers (admin-only, reads included: channel secrets), the own push
subscriptions /push/subscriptions ([S]) and the VAPID public key browsers subscribe with."""

from __future__ import annotations

from typing import Any

from hausbox.api.routing import Call, Route
from hausbox.api.schema import BOOLEAN, INT32_MAX, STRING, nullable, obj, one_of, text
from hausbox.notifications.service import CHANNELS, MESSAGE_MAX, NAME_MAX, SOURCE_TYPES
from hausbox.notifications.webpush import ENDPOINT_MAX


def list_publishers(call: Call) -> list[dict[str, Any]]:
    return call.engine.notifications.all_json()


def get_publisher(call: Call, id: str) -> dict[str, Any]:
    return call.engine.notifications.get_json(id)


def create_publisher(call: Call) -> dict[str, Any]:
    return call.engine.notifications.create(call.body)


def update_publisher(call: Call, id: str) -> dict[str, Any]:
    return call.engine.notifications.update(id, call.body)


def delete_publisher(call: Call, id: str) -> None:
    call.engine.notifications.delete(id)


def test_channel(call: Call, id: str) -> dict[str, Any]:
    return call.engine.notifications.test_channel(id)


def test_mappings(call: Call, id: str) -> dict[str, Any]:
    return call.engine.notifications.test_mappings(id)


def add_mapping(call: Call, id: str) -> dict[str, Any]:
    return call.engine.notifications.add_mapping(id, call.body)


def update_mapping(call: Call, id: str, mappingId: str) -> dict[str, Any]:
    return call.engine.notifications.update_mapping(id, mappingId, call.body)


def delete_mapping(call: Call, id: str, mappingId: str) -> None:
    call.engine.notifications.delete_mapping(id, mappingId)


def subscribe(call: Call) -> dict[str, Any]:
    keys = call.body["keys"]
    return call.engine.notifications.push.add(call.principal.user_id, call.body["endpoint"], keys["p256dh"], keys["auth"])


def unsubscribe(call: Call) -> None:
    call.engine.notifications.push.remove(call.body["endpoint"], call.principal.user_id, call.principal.is_admin)


def vapid_public_key(call: Call) -> dict[str, Any]:
    return {"publicKey": call.engine.notifications.webpush.public_key}


CHANNEL_TYPE = one_of(*CHANNELS)
CHANNEL_CONFIG = {
    "type": "object",
    "description": (
        "telegram: {botToken, chatId, apiUrl?}; webhook: {url, secret?} (with a secret, X-Hausbox-Signature: "
        "sha256=<hex HMAC-SHA256 of the body>); webpush: {subject?} (the VAPID sub claim, mailto: or https:)"
    ),
}
THROTTLE = {"type": "integer", "minimum": 0, "maximum": INT32_MAX}
PUBLISHER_OPTIONAL = {"enabled": BOOLEAN, "forwardAlarms": BOOLEAN}
MAPPING_FIELDS = {"message": text(MESSAGE_MAX), "sourceType": one_of(*SOURCE_TYPES), "sourceId": text(200), "sourceKey": text(200)}
ENDPOINT = {"type": "string", "minLength": 1, "maxLength": ENDPOINT_MAX}
KEYS = obj(required={"p256dh": text(200), "auth": text(100)})

MAPPING = {
    "type": "object",
    "properties": {
        "id": STRING, "publisherId": STRING, "message": STRING, "sourceType": STRING, "sourceId": STRING, "sourceKey": STRING,
        "throttleMs": {"type": "integer"}, "createdAt": STRING,
    },
}  # fmt: skip
PUBLISHER = {
    "type": "object",
    "description": "A notification publisher with its mappings and the state of its delivery (retries, last error)",
    "properties": {
        "id": STRING, "name": STRING, "channelType": STRING, "channelConfig": {"type": "object"}, "enabled": BOOLEAN,
        "forwardAlarms": BOOLEAN, "createdAt": STRING, "updatedAt": STRING, "mappings": {"type": "array", "items": MAPPING},
        "delivery": {
            "type": "object",
            "description": "state: idle, ok, retrying (backing off), failing (last message refused), gone; counters since start",
            "properties": {
                "state": STRING, "queued": {"type": "integer"}, "sent": {"type": "integer"}, "failedAttempts": {"type": "integer"},
                "dropped": {"type": "integer"}, "held": {"type": "integer"}, "lastError": nullable(STRING),
                "lastErrorAt": nullable(STRING), "lastSentAt": nullable(STRING), "nextRetryAt": nullable(STRING),
                "destinations": {"type": "integer"},
            },
        },
    },
}  # fmt: skip
VAPID_KEY = {
    "type": "object",
    "description": "The box's VAPID public key (base64url, uncompressed P-256 point): the applicationServerKey of PushManager.subscribe()",
    "properties": {"publicKey": STRING},
    "required": ["publicKey"],
}
SUBSCRIPTION = {"type": "object", "description": "The subscription as registered", "properties": {"id": STRING, "endpoint": STRING, "createdAt": STRING}}

ROUTES = [
    Route("GET", "/notification-publishers", list_publishers, summary="Notification publishers with mappings and delivery state",
          response={"type": "array", "items": PUBLISHER, "description": "Every notification publisher"}),  # fmt: skip
    Route("GET", "/notification-publishers/<id>", get_publisher, summary="One notification publisher", response=PUBLISHER),
    Route(
        "POST",
        "/notification-publishers",
        create_publisher,
        body=obj(required={"name": text(NAME_MAX), "channelType": CHANNEL_TYPE, "channelConfig": CHANNEL_CONFIG}, optional=PUBLISHER_OPTIONAL),
        status=201,
        summary="Create a notification publisher (telegram, webhook or webpush)",
        response=PUBLISHER,
    ),
    Route(
        "PUT",
        "/notification-publishers/<id>",
        update_publisher,
        body=obj(optional={"name": text(NAME_MAX), "channelType": CHANNEL_TYPE, "channelConfig": CHANNEL_CONFIG, **PUBLISHER_OPTIONAL}),
        summary="Update a notification publisher (a channelConfig given replaces the stored one)",
        response=PUBLISHER,
    ),
    Route("DELETE", "/notification-publishers/<id>", delete_publisher, summary="Delete a notification publisher and its mappings"),
    Route("POST", "/notification-publishers/<id>/test-channel", test_channel, summary="Send a test message now ({success: true}; 400 saying why it failed)",
          response={"type": "object", "description": "Delivered", "properties": {"success": BOOLEAN, "sent": {"type": "integer"}}}),  # fmt: skip
    Route("POST", "/notification-publishers/<id>/test", test_mappings, summary="Send each mapping's current value ({sent: n} queued)",
          response={"type": "object", "description": "How many messages were queued", "properties": {"sent": {"type": "integer"}}}),  # fmt: skip
    Route(
        "POST",
        "/notification-publishers/<id>/mappings",
        add_mapping,
        body=obj(required=MAPPING_FIELDS, optional={"throttleMs": THROTTLE}),
        status=201,
        summary="Add a mapping (409 for a second one of the same source and key)",
        response=MAPPING,
    ),
    Route("PUT", "/notification-publishers/<id>/mappings/<mappingId>", update_mapping, body=obj(optional={**MAPPING_FIELDS, "throttleMs": THROTTLE}),
          summary="Update a mapping", response=MAPPING),  # fmt: skip
    Route("DELETE", "/notification-publishers/<id>/mappings/<mappingId>", delete_mapping, summary="Remove a mapping"),
    Route("POST", "/push/subscriptions", subscribe, body=obj(required={"endpoint": ENDPOINT, "keys": KEYS}), status=201,
          summary="Register this browser's push subscription (https endpoint, base64url p256dh and auth keys)", response=SUBSCRIPTION),  # fmt: skip
    Route("DELETE", "/push/subscriptions", unsubscribe, body=obj(required={"endpoint": ENDPOINT}), summary="Remove one of your push subscriptions, by endpoint"),
    Route("GET", "/push/vapid-public-key", vapid_public_key, summary="The VAPID public key browsers subscribe with", response=VAPID_KEY),
]
