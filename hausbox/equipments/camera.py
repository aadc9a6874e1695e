"""Camera proxy: the current frame and the live stream of a ``camera`` equipment, relayed by us.

A camera equipment offers a snapshot when it has a data binding ``snapshot_url`` and a stream when
it has ``stream_url``, each a text value holding an http(s) address the hub can reach (the clients
often cannot: the camera sits on the LAN, the client may not). The address comes from a device, so
it is fetched only once an administrator approved it for that equipment, in the settings store:
``camera.<equipment id>.snapshotUrl`` and ``camera.<equipment id>.streamUrl`` hold the URL the
device must report (compared with credentials masked, so the form shown by ``GET /equipments/:id``
approves it too; the credentials sent are the device's). An address the device reports otherwise
is a 403 and is not fetched. What the fetch may reach and how it connects: ``camera_fetch.py``.

The bytes are passed through with the camera's content type; a snapshot is bounded in size and
time, a stream too. A missing binding is a 404, a camera that fails or does not answer is a 502.
The URL is never logged nor echoed: it may carry credentials (values show them masked).
"""

from __future__ import annotations

import http.client
import logging
import time
from typing import Any, Iterable, Iterator

import bottle

from hausbox.core.errors import Forbidden, NotFound
from hausbox.core.settings import SettingsStore
from hausbox.core.urls import mask_credentials
from hausbox.equipments.camera_fetch import BadGateway, Timeouts, Upstream, open_camera, origin_of
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager

log = logging.getLogger("hausbox.camera")

SNAPSHOT_ALIAS = "snapshot_url"
STREAM_ALIAS = "stream_url"
APPROVAL_PREFIX = "camera."
APPROVAL_NAMES = {SNAPSHOT_ALIAS: "snapshotUrl", STREAM_ALIAS: "streamUrl"}
URL_MAX_CHARS = 2048
SNAPSHOT_MAX_BYTES = 10 << 20
SNAPSHOT_TIMEOUTS = Timeouts(connect=5.0, read=10.0)
SNAPSHOT_DEADLINE_S = 20.0  # the whole download (plus at most one read timeout)
STREAM_TIMEOUTS = Timeouts(connect=5.0, read=30.0)
STREAM_MAX_S = 3600.0  # a viewer reconnects after an hour
STREAM_MAX_BYTES = 4 << 30
CHUNK_BYTES = 16 << 10


def approval_key(equipment_id: str, alias: str) -> str:
    return f"{APPROVAL_PREFIX}{equipment_id}.{APPROVAL_NAMES[alias]}"


class CameraProxy:
    def __init__(self, equipments: EquipmentManager, settings: SettingsStore, local_addresses: Iterable[str] = ()):
        self._equipments = equipments
        self._settings = settings
        self._local_addresses = frozenset(local_addresses)
        self.snapshot_max_bytes = SNAPSHOT_MAX_BYTES
        self.snapshot_deadline_s = SNAPSHOT_DEADLINE_S
        self.stream_max_s = STREAM_MAX_S
        self.stream_max_bytes = STREAM_MAX_BYTES
        settings.add_prefix_validator(APPROVAL_PREFIX, self.check_approval)

    def check_approval(self, key: str, value: Any) -> None:
        """The settings validator of ``camera.*``: a camera equipment's id, then an http(s) URL."""
        _, equipment_id, name = (key.split(".") + ["", ""])[:3]
        if key.count(".") != 2 or name not in APPROVAL_NAMES.values():
            raise ValueError("camera.<equipment id>.snapshotUrl or camera.<equipment id>.streamUrl is expected")
        equipment = self._equipments.get(equipment_id)
        if equipment is None or equipment.type != "camera":
            raise ValueError("no camera equipment has this id")
        if not isinstance(value, str) or len(value) > URL_MAX_CHARS:
            raise ValueError(f"an http(s) URL of at most {URL_MAX_CHARS} characters is expected")
        origin_of(value)

    def forget(self, equipment_id: str) -> None:
        """Drop the approvals of an equipment that is gone."""
        keys = [approval_key(equipment_id, alias) for alias in APPROVAL_NAMES if self._settings.get(approval_key(equipment_id, alias)) is not None]
        if keys:
            self._settings.set_many(dict.fromkeys(keys))

    def _url(self, equipment_id: str, alias: str, what: str) -> tuple[Equipment, str]:
        equipment = self._equipments.require(equipment_id)
        if equipment.type != "camera" or alias not in equipment.data_bindings:
            raise NotFound(f"This equipment has no camera {what}: bind a {alias} data binding")
        datum = self._equipments.datum_of(equipment, alias)
        url = datum.reported() if datum is not None else None
        if not isinstance(url, str) or not url.strip().lower().startswith(("http://", "https://")):
            raise BadGateway(f"The camera {what} address is not known yet (no http(s) URL in {alias})")
        approved = self._settings.get(approval_key(equipment.id, alias))
        if not isinstance(approved, str) or mask_credentials(approved.strip()) != mask_credentials(url.strip()):
            raise Forbidden(f"The camera {what} address this device reports is not approved: an administrator sets {approval_key(equipment.id, alias)}")
        return equipment, url.strip()

    def _open(self, equipment: Equipment, url: str, timeouts: Timeouts, what: str) -> Upstream:
        try:
            response = open_camera(url, timeouts, self._local_addresses)
        except BadGateway as error:
            log.warning("camera %s: %s refused or unavailable (%s)", equipment.name, what, error)
            raise
        if response.status >= 300:
            response.close()
            log.warning("camera %s: %s answered %d", equipment.name, what, response.status)
            raise BadGateway(f"The camera answered {response.status}")
        return response

    def snapshot(self, equipment_id: str) -> bottle.HTTPResponse:
        equipment, url = self._url(equipment_id, SNAPSHOT_ALIAS, "snapshot")
        response = self._open(equipment, url, SNAPSHOT_TIMEOUTS, "snapshot")
        try:
            body = self._read_bounded(response)
        finally:
            response.close()
        return bottle.HTTPResponse(body, status=200, headers=_headers(response))

    def _read_bounded(self, response: Upstream) -> bytes:
        deadline = time.monotonic() + self.snapshot_deadline_s
        parts: list[bytes] = []
        size = 0
        try:
            while chunk := response.read1(CHUNK_BYTES):
                size += len(chunk)
                if size > self.snapshot_max_bytes:
                    raise BadGateway(f"The camera snapshot is larger than {self.snapshot_max_bytes} bytes")
                if time.monotonic() > deadline:
                    raise BadGateway("The camera snapshot took too long")
                parts.append(chunk)
        except (OSError, http.client.HTTPException) as error:
            raise BadGateway(f"The camera snapshot was cut short ({error.__class__.__name__})") from None
        return b"".join(parts)

    def stream(self, equipment_id: str) -> bottle.HTTPResponse:
        equipment, url = self._url(equipment_id, STREAM_ALIAS, "stream")
        response = self._open(equipment, url, STREAM_TIMEOUTS, "stream")
        relay = _relay(response, time.monotonic() + self.stream_max_s, self.stream_max_bytes)
        return bottle.HTTPResponse(relay, status=200, headers=_headers(response))


def _headers(response: Upstream) -> dict[str, str]:
    return {"Content-Type": response.header("Content-Type") or "application/octet-stream", "Cache-Control": "no-store"}


def _relay(response: Upstream, deadline: float, max_bytes: int) -> Iterator[bytes]:
    """The upstream bytes as they arrive (not held back to fill a buffer), until ``deadline`` or
    ``max_bytes``; closing this iterator (the client went away) closes the upstream connection."""
    sent = 0
    try:
        while time.monotonic() < deadline and sent < max_bytes:
            chunk = response.read1(min(CHUNK_BYTES, max_bytes - sent))
            if not chunk:
                return
            sent += len(chunk)
            yield chunk
    except Exception as error:  # the camera hung up or stalled: the stream just ends
        log.info("camera stream ended: %s", error.__class__.__name__)
    finally:
        response.close()
