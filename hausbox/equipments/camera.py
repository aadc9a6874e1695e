"""Camera proxy: the current frame and the live stream of a ``camera`` equipment, relayed by us.

A camera equipment offers a snapshot when it has a data binding ``snapshot_url`` and a stream when
it has ``stream_url``, each a text value holding an http(s) address the hub can reach (the clients
often cannot: the camera sits on the LAN, the client may not). The bytes are passed through with
the camera's content type; a snapshot is capped in size. A missing binding is a 404, a camera that
fails or does not answer is a 502. The URL is never logged nor echoed: it may carry credentials.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Iterator

import bottle

from hausbox.core.errors import ApiError, NotFound
from hausbox.equipments.equipment import Equipment
from hausbox.equipments.manager import EquipmentManager

if TYPE_CHECKING:
    import requests

log = logging.getLogger("hausbox.camera")

SNAPSHOT_ALIAS = "snapshot_url"
STREAM_ALIAS = "stream_url"
SNAPSHOT_MAX_BYTES = 10 << 20
SNAPSHOT_TIMEOUT = (5.0, 10.0)  # connect, read (seconds)
SNAPSHOT_DEADLINE_S = 20.0  # the whole download
STREAM_TIMEOUT = (5.0, 30.0)
CHUNK_BYTES = 16 << 10


class BadGateway(ApiError):
    status = 502


class CameraProxy:
    def __init__(self, equipments: EquipmentManager, snapshot_max_bytes: int = SNAPSHOT_MAX_BYTES):
        self._equipments = equipments
        self.snapshot_max_bytes = snapshot_max_bytes

    def _url(self, equipment_id: str, alias: str, what: str) -> tuple[Equipment, str]:
        equipment = self._equipments.require(equipment_id)
        if equipment.type != "camera" or alias not in equipment.data_bindings:
            raise NotFound(f"This equipment has no camera {what}: bind a {alias} data binding")
        url = equipment.data.get(alias)
        if not isinstance(url, str) or not url.strip().lower().startswith(("http://", "https://")):
            raise BadGateway(f"The camera {what} address is not known yet (no http(s) URL in {alias})")
        return equipment, url.strip()

    def _open(self, equipment: Equipment, url: str, timeout: tuple[float, float], what: str) -> "requests.Response":
        import requests  # here, not at the top: it costs 50 ms of every boot for a rarely used route

        try:
            response = requests.get(url, stream=True, timeout=timeout)
        except requests.RequestException as error:
            log.warning("camera %s: %s unavailable (%s)", equipment.name, what, error.__class__.__name__)
            raise BadGateway(f"The camera did not answer ({error.__class__.__name__})")
        if response.status_code >= 400:
            response.close()
            log.warning("camera %s: %s answered %d", equipment.name, what, response.status_code)
            raise BadGateway(f"The camera answered {response.status_code}")
        return response

    def snapshot(self, equipment_id: str) -> bottle.HTTPResponse:
        equipment, url = self._url(equipment_id, SNAPSHOT_ALIAS, "snapshot")
        response = self._open(equipment, url, SNAPSHOT_TIMEOUT, "snapshot")
        deadline = time.monotonic() + SNAPSHOT_DEADLINE_S
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_content(CHUNK_BYTES):
                size += len(chunk)
                if size > self.snapshot_max_bytes:
                    raise BadGateway(f"The camera snapshot is larger than {self.snapshot_max_bytes} bytes")
                if time.monotonic() > deadline:
                    raise BadGateway("The camera snapshot took too long")
                parts.append(chunk)
        except OSError as error:  # requests' errors are OSErrors
            raise BadGateway(f"The camera snapshot was cut short ({error.__class__.__name__})")
        finally:
            response.close()
        headers = {"Content-Type": response.headers.get("Content-Type") or "application/octet-stream", "Cache-Control": "no-store"}
        return bottle.HTTPResponse(b"".join(parts), status=200, headers=headers)

    def stream(self, equipment_id: str) -> bottle.HTTPResponse:
        equipment, url = self._url(equipment_id, STREAM_ALIAS, "stream")
        response = self._open(equipment, url, STREAM_TIMEOUT, "stream")
        headers = {"Content-Type": response.headers.get("Content-Type") or "application/octet-stream", "Cache-Control": "no-store"}
        return bottle.HTTPResponse(_relay(response), status=200, headers=headers)


def _relay(response: requests.Response) -> Iterator[bytes]:
    """The upstream bytes as they arrive (not held back to fill a buffer); closing this iterator
    (the client went away) closes the upstream connection."""
    read1 = getattr(response.raw, "read1", None)  # urllib3 >= 2.3
    try:
        if read1 is None:
            yield from response.iter_content(CHUNK_BYTES)
            return
        while True:
            chunk = read1(CHUNK_BYTES, decode_content=True)
            if not chunk:
                return
            yield chunk
    except Exception as error:  # the camera hung up or stalled: the stream just ends
        log.info("camera stream ended: %s", error.__class__.__name__)
    finally:
        response.close()
