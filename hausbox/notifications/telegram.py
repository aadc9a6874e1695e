"""The Telegram channel: the Bot API's ``sendMessage``.

``channelConfig``: ``botToken`` and ``chatId`` (required; a chat id is a number or ``@channel``),
``apiUrl`` (optional, default ``https://api.telegram.org``: a self-hosted Bot API server, or a
local one in tests). The token is a secret: admin-only reads, masked in events, never logged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hausbox.core.errors import BadRequest
from hausbox.notifications.config import http_url, optional_text, required_field
from hausbox.notifications.delivery import post

if TYPE_CHECKING:
    import requests  # requests is imported where it is used: a sixth of the service's start, seconds on a slow board.

TYPE = "telegram"
DEFAULT_API_URL = "https://api.telegram.org"
SECRET_FIELDS = ("botToken",)
_TOKEN = re.compile(r"^[A-Za-z0-9:_-]{4,200}$")


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    token = required_field(config, "botToken", str)
    if not _TOKEN.match(token):
        raise BadRequest("channelConfig.botToken is not in the expected format")
    chat_id = required_field(config, "chatId", (str, int))
    if isinstance(chat_id, bool) or (isinstance(chat_id, str) and not chat_id.strip()) or (isinstance(chat_id, int) and abs(chat_id) >= 1 << 63):
        raise BadRequest("channelConfig.chatId must be a chat id or @channel name")
    checked: dict[str, Any] = {"botToken": token, "chatId": chat_id}
    api_url = optional_text(config, "apiUrl", 2000)
    if api_url is not None:
        checked["apiUrl"] = http_url(api_url, "channelConfig.apiUrl")
    return checked


def send(session: requests.Session, config: dict[str, Any], text: str) -> None:
    base = (config.get("apiUrl") or DEFAULT_API_URL).rstrip("/")
    token = config["botToken"]
    post(session, f"{base}/bot{token}/sendMessage", "the Telegram API", json={"chat_id": config["chatId"], "text": text})
