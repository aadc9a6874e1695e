"""The webhook channel: a JSON POST to a URL of the administrator's choice.

``channelConfig``: ``url`` (required, http or https), ``secret`` (optional). With a secret, the
request carries ``X-Hausbox-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes, keyed by
the secret>``, so the receiver can check it came from this box. The body:
``{"text", "title", "kind": "mapping"|"alarm"|"test", "publisherId", "publisherName", "sentAt", ...}``
(a mapping's message adds ``mappingId, sourceType, sourceId, sourceKey, value``; an alarm's
``alarmId, level, source, message, resolved``).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

import orjson

from hausbox.notifications.config import http_url, optional_text, required_field
from hausbox.notifications.delivery import post

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

TYPE = "webhook"
SECRET_FIELDS = ("secret",)
SIGNATURE_HEADER = "X-Hausbox-Signature"


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    checked: dict[str, Any] = {"url": http_url(required_field(config, "url", str), "channelConfig.url")}
    secret = optional_text(config, "secret", 500)
    if secret is not None:
        checked["secret"] = secret
    return checked


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def send(session: requests.Session, config: dict[str, Any], payload: dict[str, Any]) -> None:
    body = orjson.dumps(payload)
    headers = {"Content-Type": "application/json", "User-Agent": "hausbox-notifications"}
    secret = config.get("secret")
    if secret:
        headers[SIGNATURE_HEADER] = signature(secret, body)
    post(session, config["url"], "the webhook", data=body, headers=headers)
