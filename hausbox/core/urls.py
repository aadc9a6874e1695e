"""Credentials inside URLs (``http://admin:pw@camera/snap.jpg``, ``...?user=admin&pwd=pw``), masked.

A device may report such a URL as a value (a camera's snapshot address). What the API, the
WebSocket, the activity feed and the logs show is the masked form: the user-info part becomes
``***`` and so does the value of a query parameter named like a secret.
"""

from __future__ import annotations

import re

MASK = "***"
# scheme://user-info@ : the user-info runs up to the last @ before the path, query or fragment.
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")
# name=value in a query, when the name looks like a secret: pass, pwd, token, secret, key, auth, sig.
_SECRET_PARAM = re.compile(r"(?i)([?&;][^=&#\s]*(?:pass|pwd|token|secret|key|auth|sig)[^=&#\s]*=)[^&#\s]*")


def mask_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it masked; the same object when it has none."""
    if "://" not in text:
        return text
    masked = _SECRET_PARAM.sub(lambda m: m.group(1) + MASK, _USER_INFO.sub(lambda m: m.group(1) + MASK + "@", text))
    return text if masked == text else masked
