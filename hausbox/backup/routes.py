"""Routes: /backup (admin only): export, restore (staged for the next start), local backups."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import bottle

from hausbox.api.routing import Call, Route
from hausbox.api.schema import STRING, obj
from hausbox.backup import upload
from hausbox.backup.service import MAX_UPLOAD_BYTES
from hausbox.core.errors import BadRequest, PayloadTooLarge
from hausbox.core.jsonenc import dumps as json_bytes

MAX_JSON_BODY_BYTES = 64 << 20
RESTORED = {
    "type": "object",
    "description": "{success: true, restoredAt, restartRequired: true, tables: {name: rows}, historyPoints, filesRestored}: "
    "validated and staged; applied at the next start. 400 names the problem (table, row, column; entry; file and line), "
    "nothing changed; 409 another restore is being prepared; 413 a backup above 512 MB",
}
LOCAL = {"type": "object", "description": "{backups: [{filename, size, createdAt}]}, newest first"}


def export(call: Call) -> Any:
    backups = call.engine.backups
    work = backups.work_dir()
    try:
        built = backups.export(work)
        name = f"hausbox-backup-{datetime.now(timezone.utc):%Y-%m-%d}"
        if isinstance(built, dict):  # no history: a JSON document, named as a download like the ZIP
            headers = {"Content-Type": "application/json", "Content-Disposition": f'attachment; filename="{name}.json"'}
            return bottle.HTTPResponse(json_bytes(built), status=200, headers=headers)
        name += ".zip"
        size = built.stat().st_size
        stream = open(built, "rb")  # unlinked below: the open file is all that is left
    finally:
        shutil.rmtree(work, ignore_errors=True)
    headers = {"Content-Type": "application/zip", "Content-Disposition": f'attachment; filename="{name}"', "Content-Length": str(size)}
    return bottle.HTTPResponse(_chunks(stream), status=200, headers=headers)


def _chunks(stream: Any) -> Iterator[bytes]:
    with stream:
        while chunk := stream.read(1 << 16):
            yield chunk


def _json_payload(raw: bytes | bytearray) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise BadRequest("Malformed JSON body") from None


def restore(call: Call) -> dict[str, Any]:
    request = call.request
    content_type = request.environ.get("CONTENT_TYPE", "")
    read = upload.read_stream(request.environ["wsgi.input"])
    if content_type.lower().startswith("application/json"):
        if request.content_length > MAX_JSON_BODY_BYTES:
            raise PayloadTooLarge(f"A JSON backup is at most {MAX_JSON_BODY_BYTES >> 20} MB (send a ZIP)")
        raw = bytearray()
        while chunk := read():
            raw += chunk
            if len(raw) > MAX_JSON_BODY_BYTES:
                raise PayloadTooLarge(f"A JSON backup is at most {MAX_JSON_BODY_BYTES >> 20} MB (send a ZIP)")
        return call.engine.backups.restore_payload(_json_payload(raw))
    boundary = upload.boundary_of(content_type)
    if request.content_length > MAX_UPLOAD_BYTES + (1 << 20):
        raise PayloadTooLarge(f"The backup is larger than {MAX_UPLOAD_BYTES >> 20} MB")
    backups = call.engine.backups
    work = backups.work_dir()
    try:
        zip_path = work / "upload.zip"
        with open(zip_path, "xb") as target:
            upload.save_file_field(read, boundary, target, MAX_UPLOAD_BYTES)
        if _is_json_file(zip_path):  # the JSON document GET /backup gives without history, as a file
            return backups.restore_payload(_json_payload(zip_path.read_bytes()))
        return backups.restore_archive(zip_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _is_json_file(path: Path) -> bool:
    with open(path, "rb") as file:
        start = file.read(64).lstrip()
    return start.startswith(b"{") and path.stat().st_size <= MAX_JSON_BODY_BYTES


def list_local(call: Call) -> dict[str, Any]:
    return {"backups": call.engine.backups.list_local()}


def restore_local(call: Call) -> dict[str, Any]:
    return call.engine.backups.restore_local(call.body["filename"])


ROUTES = [
    Route("GET", "/backup", export,
          summary="Full export: a ZIP (hausbox-backup.json with {version: 1, exportedAt, engineVersion, tables}, history/*.csv, "
          "data/<file>: the components' data files and secrets.json; never the instance marker), or JSON {version: 1, exportedAt, tables} "
          "when there is no history at all",
          response={"type": "object", "description": "application/zip (Content-Disposition: attachment; filename=\"hausbox-backup-YYYY-MM-DD.zip\") or application/json"}),
    Route("POST", "/backup", restore,
          summary="Restore: multipart/form-data with a file field holding the ZIP, or a JSON body {version: 1, tables}; "
          "validated completely and staged, applied at the next start",
          response=RESTORED),
    Route("GET", "/backup/local", list_local, summary="The automatic local backups (taken before an update; the 3 newest)", response=LOCAL),
    Route("POST", "/backup/restore-local", restore_local, body=obj(required={"filename": STRING}),
          summary="Restore a local backup by its file name (no path): as POST /backup", response=RESTORED),
]  # fmt: skip
