"""The web push channel: VAPID-signed (RFC 8292), encrypted (RFC 8291, aes128gcm) messages to the
browsers that registered with ``POST /push/subscriptions``, through pywebpush.

The VAPID key pair is generated on first start and kept in ``secrets.json`` (``core/secrets.py``);
browsers subscribe with its public half, ``GET /push/vapid-public-key``. ``channelConfig``:
``subject`` (optional, the VAPID ``sub`` claim push services may use to reach the box's owner: a
``mailto:`` or ``https:`` URL). The message a browser's service worker receives is JSON:
``{"title", "body", "kind", "publisherId", "timestamp"}``.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from hausbox.core.errors import BadRequest
from hausbox.notifications.config import http_url, optional_text
from hausbox.notifications.delivery import TIMEOUT_S, DeliveryError, check_answer

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

TYPE = "webpush"
SECRET_FIELDS: tuple[str, ...] = ()
DEFAULT_SUBJECT = "mailto:admin@hausbox.local"
TTL_S = 24 * 3600  # a push service keeps a message a day for a browser that is offline
ENDPOINT_MAX = 2048
_SUBJECT = re.compile(r"^(mailto:[^@\s]+@[^@\s]+|https://[^\s/]+\S*)$", re.IGNORECASE)
_B64URL = re.compile(r"^[A-Za-z0-9_-]+={0,2}$")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    if not _B64URL.match(text):
        raise ValueError("not base64url")
    stripped = text.rstrip("=")
    return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    subject = optional_text(config, "subject", 500)
    if subject is None:
        return {}
    if not _SUBJECT.match(subject):
        raise BadRequest("channelConfig.subject must be a mailto: or https: URL")
    return {"subject": subject}


# ---- subscriptions -------------------------------------------------------------------------------
def check_subscription(endpoint: str, p256dh: str, auth: str) -> tuple[str, str, str]:
    """The subscription's fields as a browser's PushSubscription gives them, checked: an https
    endpoint, ``p256dh`` an uncompressed P-256 point (65 bytes), ``auth`` 16 bytes, base64url."""
    if len(endpoint) > ENDPOINT_MAX:
        raise BadRequest(f"endpoint must be at most {ENDPOINT_MAX} characters")
    endpoint = http_url(endpoint, "endpoint", ("https",))
    try:
        point = b64url_decode(p256dh)
    except (ValueError, binascii.Error):
        raise BadRequest("keys.p256dh must be base64url") from None
    if len(point) != 65 or point[0] != 4:
        raise BadRequest("keys.p256dh must be an uncompressed P-256 public key (65 bytes)")
    from cryptography.hazmat.primitives.asymmetric import ec  # here: ~8 MB most homes never need

    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        raise BadRequest("keys.p256dh is not a point of the P-256 curve") from None
    try:
        secret = b64url_decode(auth)
    except (ValueError, binascii.Error):
        raise BadRequest("keys.auth must be base64url") from None
    if len(secret) != 16:
        raise BadRequest("keys.auth must be 16 bytes")
    return endpoint, b64url(point), b64url(secret)


# ---- sending -------------------------------------------------------------------------------------
class WebPush:
    """Signs and encrypts with the box's VAPID key. The key is loaded at its first use: cryptography
    and py_vapid take ~8 MB of memory, which a home without web push should not pay for."""

    def __init__(self, private_key_b64url: str):
        self._private_key = private_key_b64url
        self._loaded: Any = None

    @property
    def _vapid(self) -> Any:
        if self._loaded is None:
            from py_vapid import Vapid02

            self._loaded = Vapid02.from_raw(self._private_key.encode("ascii"))
        return self._loaded

    @property
    def public_key(self) -> str:
        from cryptography.hazmat.primitives import serialization

        return b64url(self._vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))

    def send(self, session: requests.Session, subscription: dict[str, Any], payload: dict[str, Any], subject: str | None = None) -> None:
        """Deliver ``payload`` to one subscription ``{endpoint, keys: {p256dh, auth}}``; DeliveryError
        (``gone`` on 404 or 410: the browser unsubscribed)."""
        # Imported here: pywebpush pulls in aiohttp (~0.3 s and several MB at start-up) for a channel
        # most homes never use; the first push pays for it once.
        import requests
        from pywebpush import WebPusher, WebPushException

        endpoint = subscription["endpoint"]
        parts = urlsplit(endpoint)
        claims = {"sub": subject or DEFAULT_SUBJECT, "aud": f"{parts.scheme}://{parts.netloc}", "exp": int(time.time()) + 12 * 3600}
        try:
            headers = self._vapid.sign(claims)
            pusher = WebPusher(subscription, requests_session=session)
            response = pusher.send(orjson.dumps(payload), headers, ttl=TTL_S, content_encoding="aes128gcm", timeout=TIMEOUT_S)
        except requests.Timeout:
            raise DeliveryError(f"the push service did not answer within {TIMEOUT_S:g} s") from None
        except requests.RequestException as error:
            raise DeliveryError(f"the push service is unreachable: {type(error).__name__}") from None
        except (WebPushException, ValueError) as error:  # a subscription it cannot encrypt for
            raise DeliveryError(f"the subscription is unusable: {error}", permanent=True) from None
        if response.status_code in (404, 410):
            raise DeliveryError(f"the push service answered {response.status_code}", permanent=True, gone=True)
        check_answer(response, "the push service")
